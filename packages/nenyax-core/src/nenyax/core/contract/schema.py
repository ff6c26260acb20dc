"""The layout version of every persisted record, and the slot that keeps what a newer version added.

The rule (the core README says it for users): the version is MAJOR.MINOR. A minor version only adds
fields; a reader keeps the fields it does not know (`Record.unknown_fields`, written back unchanged)
and reads the rest. A newer major version is refused in one sentence naming what to install.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import attrs

_VERSION = re.compile(r"(\d+)\.(\d+)")


@attrs.frozen(order=True)
class SchemaVersion:
    """``MAJOR.MINOR``, written as the string ``"1.1"``; the int ``1`` older records carry reads as 1.0."""

    major: int
    minor: int = 0

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    @classmethod
    def parse(cls, value: Any) -> SchemaVersion:
        """The version `value` names (an int N is N.0, a string ``"M.m"``); ValueError for anything else."""
        if isinstance(value, SchemaVersion):
            return value
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return cls(value, 0)
        if isinstance(value, str) and (match := _VERSION.fullmatch(value)):
            return cls(int(match[1]), int(match[2]))
        msg = f'schema_version {value!r} is not MAJOR.MINOR (such as "1.1")'
        raise ValueError(msg)


SCHEMA_VERSION = SchemaVersion(1, 5)
"""This layout. 1.1 added `Trajectory.sample` and `Trajectory.agent` (1.0 kept them in `info`); 1.2 added
`ModelCall`'s `tokens`, `top_logprobs`, `requested_params`, `prompt` and `prompt_logprobs`, and
`Trajectory.token_faithful`; 1.3 added `ModelCall.queued_s` and `Trajectory.final_observation`; 1.4 added
`findings` to each check's result (the one check framework) and the run settings records (`EvalSettings`,
`TrainSettings`: run.toml's `schema_version`); 1.5 added `Trajectory.verdicts` (judges put on an environment)."""


class _ReadOnlyFields(dict[str, Any]):
    """A dict that refuses changes: records are frozen, and their unknown fields with them.

    Not a `MappingProxyType`, which cannot be pickled: records travel between processes (a process
    pool's workers send their trajectories back pickled).
    """

    def _refuse(self, *_args: Any, **_kwargs: Any) -> None:
        msg = "A record's unknown_fields are read-only (records are frozen)."
        raise TypeError(msg)

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _refuse  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        return (_ReadOnlyFields, (dict(self),))


def read_only_fields(fields: Mapping[str, Any]) -> Mapping[str, Any]:
    """`fields` as a read-only mapping that pickles (what `serde` stores in `Record.unknown_fields`)."""
    return _ReadOnlyFields(fields)


NO_UNKNOWN_FIELDS: Mapping[str, Any] = _ReadOnlyFields()
"""The shared, empty, read-only default of `Record.unknown_fields` (no dict is made per record)."""


@attrs.frozen(kw_only=True)
class Record:
    """Base of every persisted record type (trajectories, steps, model calls, manifests, reports...).

    `unknown_fields` holds the fields a newer minor version wrote that this version does not know:
    `serde` fills it on read and writes it back, so read-then-write loses nothing. It is left out of
    equality and repr: two records are equal when every field this version knows is.
    """

    unknown_fields: Mapping[str, Any] = attrs.field(default=NO_UNKNOWN_FIELDS, eq=False, repr=False)
    """Fields of a newer minor version, as JSON data, kept for the next write."""
