"""What an environment is (`Manifest`) and what it claims it can do (`Capabilities`)."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import Any

import attrs

from nenyax.core.contract.json_data import NotJSONError, json_data
from nenyax.core.contract.schema import SCHEMA_VERSION, Record, SchemaVersion
from nenyax.core.errors import ManifestError


class Mode(enum.Enum):
    """Who drives the episode loop; fixed by the format."""

    STEP = "step"
    """The caller drives: `session()` then `act()` until done."""
    ROLLOUT = "rollout"
    """The environment's own loop drives the model."""
    TASK = "task"
    """A harness runs an agent on a graded task in a sandbox."""


@attrs.frozen(kw_only=True)
class Split(Record):
    """A named set of tasks and how many it holds."""

    name: str
    """Split name, e.g. ``train`` or ``test``."""
    count: int | None = None
    """Number of tasks, or None when unbounded or unknown."""


@attrs.frozen(kw_only=True)
class Capabilities(Record):
    """Claims about an environment; each one is verified by `nenyax check`."""

    seeded: bool = False
    """The same task and seed recreate the same start."""
    stable_task_ids: bool = False
    """Task ids are stable across processes and machines."""
    reference_policy: bool = False
    """An oracle exists: the built-in `reference` policy can solve tasks."""
    null_policy: bool = True
    """The built-in `null` policy (do nothing / answer nothing) is available."""
    random_policy: bool = True
    """The built-in `random` policy (a garbage or random action) is available."""
    stochastic: bool = False
    """Outcomes are random even for a fixed task and seed's start (e.g. slippery dynamics), so even
    an optimal policy can fail a task: the audit then asks the reference to never do worse than
    the null policy and to beat it on average, instead of beating it on every task."""
    multi_turn: bool = False
    """An episode can take more than one action (or model call); `check` fails a single-turn claim that is broken."""
    tools: bool = False
    """The environment exposes tools to the policy: true exactly when the manifest lists them."""
    concurrent_sessions: bool = True
    """Several sessions may run at once in one process; the rollout engine runs one at a time otherwise."""
    max_turns: int | None = None
    """Upper bound on actions (step mode) or model calls (other modes) per episode, checked by `check`."""


def _extra(value: Any) -> dict[str, Any]:
    """`extra` as its JSON round trip gives it back (tuples as lists...), so the manifest read back is equal."""
    try:
        data = json_data(dict(value))
    except NotJSONError as exc:
        msg = f"A manifest's extra must hold JSON data; {exc}."
        raise ManifestError(msg) from exc
    return data  # type: ignore[no-any-return]


def _splits(value: Iterable[Split]) -> tuple[Split, ...]:
    return tuple(value)  # a list given is held as the tuple it is read back as


def _tools(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


def _score_range(value: Any) -> tuple[float, float] | None:
    """Two floats (``(0, 1)`` is ``(0.0, 1.0)``), as the range is read back."""
    if value is None:
        return None
    low, high = value
    return (float(low), float(high))


@attrs.frozen(kw_only=True)
class Manifest(Record):
    """What an environment is: identity, format, mode, tasks and the shape of its I/O."""

    uri: str = attrs.field()
    """The URI it was loaded from, e.g. ``reasoning_gym:basic_arithmetic?seed=7``."""
    format: str
    """The adapter (format) name, the URI's scheme."""
    format_version: str
    """Version of the upstream library or protocol that serves it."""
    mode: Mode
    """Who drives the loop."""
    name: str
    """Short human name of the environment."""
    description: str = ""
    """One paragraph about the environment."""
    splits: tuple[Split, ...] = attrs.field(default=(), converter=_splits)
    """Task splits and their sizes."""
    observation: str = ""
    """What an observation looks like."""
    action: str = ""
    """What an action looks like."""
    tools: tuple[str, ...] = attrs.field(default=(), converter=_tools)
    """Names of tools offered to the policy."""
    score_range: tuple[float, float] | None = attrs.field(default=None, converter=_score_range)
    """Bounds of the judgment score, if known (e.g. ``(0.0, 1.0)``)."""
    extra: dict[str, Any] = attrs.field(factory=dict, converter=_extra)
    """Format-specific facts worth recording, held as JSON reads them back: a tuple given is kept as a list,
    a non-text key as its JSON text, a non-finite float or an integer beyond 64 bits as its text."""
    capabilities: Capabilities = attrs.field(factory=Capabilities)
    """What the environment claims it can do."""
    schema_version: SchemaVersion = SCHEMA_VERSION
    """Layout version of the persisted record."""

    @uri.validator
    def _uri_has_scheme(self, _attribute: attrs.Attribute[str], value: str) -> None:
        if ":" not in value:
            msg = f"Manifest uri {value!r} has no '<format>:' prefix."
            raise ManifestError(msg)
