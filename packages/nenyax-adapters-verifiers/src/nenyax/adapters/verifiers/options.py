"""What a ``verifiers:`` URI names: an installed environment module, or local code, plus its arguments."""

from __future__ import annotations

import re
from typing import Any

import attrs

from nenyax.core import BadURIError, EnvURI
from nenyax.core.toolkit.options import Option, Options

OPTIONS = Options(
    "verifiers",
    Option("reference", str, help="How the reference writes the gold answer: a template holding {gold}."),
    Option("max_turns", int, minimum=1, help="Turns allowed per episode (the environment's own when unset)."),
    Option("timeout", float, default=600.0, positive=True, help="Seconds one model call may take."),
)
"""Query keys the adapter reads itself; every other key is an argument of the environment."""

_MODULE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_ATTR = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


@attrs.frozen(kw_only=True)
class VerifiersSpec:
    """A parsed ``verifiers:<env id>`` or ``verifiers:<module>:<attr>`` URI."""

    uri: str
    module: str
    """The module to import (an environment id with dashes as underscores, as verifiers does)."""
    attr: str | None = None
    """An Environment, a Taskset (class or instance) or a factory in `module`; None: the module's own entry."""
    args: dict[str, Any] = attrs.field(factory=dict)
    """Arguments: of ``load_environment`` (legacy) or fields of the taskset's config (v1)."""
    reference: str | None = None
    """The reference reply's template (``{gold}`` is the gold answer); None: the adapter's default."""
    max_turns: int | None = None
    """v1: the agent's turn limit (default 10, verifiers' default for the ``null`` harness is unbounded)."""
    timeout: float = 600.0
    """Seconds one model call may take before the native loop gives up."""


def module_name(env_id: str) -> str:
    """The module an environment id names: verifiers' own rule (``owner/my-env`` -> ``my_env``)."""
    return env_id.rsplit("/", 1)[-1].split("@", 1)[0].replace("-", "_")


def parse_spec(uri: EnvURI) -> VerifiersSpec:
    """Split the URI's target into module and attribute, and its query into the adapter's and the env's."""
    target = uri.target.strip()
    if not target:
        msg = "Name an environment: 'verifiers:<environment id>' or 'verifiers:<module>:<attribute>'."
        raise BadURIError(msg)
    head, _, attr = target.partition(":")
    module = module_name(head)
    if not _MODULE.match(module) or (attr and not _ATTR.match(attr)):
        msg = f"{uri.raw!r} is not 'verifiers:<environment id>' or 'verifiers:<module>:<attribute>'."
        raise BadURIError(msg)
    read = OPTIONS.read(uri, rest=True)
    reference = read["reference"]
    if reference is not None and "{gold}" not in reference:
        msg = "'reference' must be a template holding {gold} (e.g. '\\boxed{{gold}}'), not " + f"{reference!r}."
        raise BadURIError(msg)
    return VerifiersSpec(
        uri=uri.raw,
        module=module,
        attr=attr or None,
        args=read.rest,
        reference=reference,
        max_turns=read["max_turns"],
        timeout=read["timeout"],
    )
