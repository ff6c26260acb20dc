"""What a ``hud:`` URI names: a module or a ``.py`` file, optionally one attribute of it, and its options."""

from __future__ import annotations

import re

import attrs

from nenyax.core import BadURIError, EnvURI

_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
OPTIONS = ("max_steps", "answer")
"""The query keys the adapter reads; hud tasks take no other arguments from a URI (a task row holds its own)."""


@attrs.frozen(kw_only=True)
class HudSpec:
    """A parsed ``hud:<module>[:<attr>]`` or ``hud:<path.py>[:<attr>]`` URI."""

    uri: str
    module: str | None = None
    """A dotted module to import (None when `path` is given)."""
    path: str | None = None
    """A ``.py`` file to import, as given (relative paths are relative to the working directory)."""
    attr: str | None = None
    """A `Taskset`, a `Task` or a list of tasks in the module; None: every one the module holds."""
    max_steps: int | None = None
    """The agent's step limit (hud's `OpenAIChatAgent` default, 10, when None)."""
    answer: str = "answer"
    """The task ``columns`` key holding a task's reference answer."""

    @property
    def source(self) -> str:
        """The module or file, as the URI names it."""
        return self.path or self.module or ""


def _split(target: str) -> tuple[str, str | None]:
    """``head[:attr]``: the attribute is what follows the last colon, when that is a dotted name."""
    head, sep, tail = target.rpartition(":")
    if sep and head and _DOTTED.match(tail):
        return head, tail
    return target, None


def parse_spec(uri: EnvURI) -> HudSpec:
    """Split the URI's target into module or file and attribute, and read its options."""
    target = uri.target.strip()
    if not target:
        msg = "Name a taskset: 'hud:<module>[:<attribute>]' or 'hud:<path/to/tasks.py>[:<attribute>]'."
        raise BadURIError(msg)
    head, attr = _split(target)
    params = dict(uri.params)
    unknown = sorted(set(params) - set(OPTIONS))
    if unknown:
        msg = f"{uri.raw!r} has unknown options {', '.join(unknown)}: a hud URI takes only {', '.join(OPTIONS)}."
        raise BadURIError(msg)
    max_steps = params.get("max_steps")
    if max_steps is not None and (not isinstance(max_steps, int) or isinstance(max_steps, bool) or max_steps < 1):
        msg = f"'max_steps' must be a positive integer, not {max_steps!r}."
        raise BadURIError(msg)
    answer = params.get("answer", "answer")
    if not isinstance(answer, str) or not answer.strip():
        msg = f"'answer' must name a task column (e.g. answer), not {answer!r}."
        raise BadURIError(msg)
    if head.endswith(".py") or "/" in head or "\\" in head:
        return HudSpec(uri=uri.raw, path=head, attr=attr, max_steps=max_steps, answer=answer)
    if not _DOTTED.match(head):
        msg = f"{uri.raw!r} is not 'hud:<module>[:<attribute>]' or 'hud:<path/to/tasks.py>[:<attribute>]'."
        raise BadURIError(msg)
    return HudSpec(uri=uri.raw, module=head, attr=attr, max_steps=max_steps, answer=answer)
