"""What a ``hud:`` URI names: a module or a ``.py`` file, optionally one attribute of it, and its options."""

from __future__ import annotations

import re

import attrs

from nenyax.core import BadURIError, EnvURI
from nenyax.core.toolkit.options import Option, Options

_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
OPTIONS = Options(
    "hud",
    Option("max_steps", int, minimum=1, help="The agent's step limit (hud's default, 10, when unset)."),
    Option("answer", str, default="answer", help="The task column holding a task's reference answer."),
)
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
    read = OPTIONS.read(uri)
    max_steps, answer = read["max_steps"], read["answer"]
    if head.endswith(".py") or "/" in head or "\\" in head:
        return HudSpec(uri=uri.raw, path=head, attr=attr, max_steps=max_steps, answer=answer)
    if not _DOTTED.match(head):
        msg = f"{uri.raw!r} is not 'hud:<module>[:<attribute>]' or 'hud:<path/to/tasks.py>[:<attribute>]'."
        raise BadURIError(msg)
    return HudSpec(uri=uri.raw, module=head, attr=attr, max_steps=max_steps, answer=answer)
