"""The one converter between contract types and JSON-able data (and bytes).

No contract class carries serialization code: everything goes through `converter`, so a new
format for persisted records changes this file alone. Three rules live here:

* versions (`contract.schema`): every `Record` keeps the fields it does not know in
  `unknown_fields` and writes them back; a record of a newer major version is refused in one
  sentence naming the nenyax-core to install;
* migrations: a record of an older version is read into this layout, here and nowhere else
  (1.0 kept a trajectory's `sample` and `agent` in its `info`);
* arrays (`contract.arrays`): a numpy array met anywhere is written as dtype, shape and values or bytes.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import Any, TypeVar

import attrs
import cattrs
import orjson
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override
from cattrs.preconf.orjson import make_converter

from nenyax.core._version import __version__
from nenyax.core.contract import arrays
from nenyax.core.contract.schema import SCHEMA_VERSION, Record, SchemaVersion, read_only_fields
from nenyax.core.contract.trajectory import ModelCall, Step, Tier, Trajectory
from nenyax.core.errors import NenyaxError, UsageError

T = TypeVar("T")

converter = make_converter(forbid_extra_keys=True)
"""The cattrs converter for every contract type (enums by value, tuples as lists)."""


class NewerRecordError(UsageError):
    """A record of a newer major schema version than this nenyax-core reads."""


# ---------------------------------------------------------------- versions

_REQUIRES = re.compile(r"nenyax-core\s*>=\s*[0-9][0-9A-Za-z.+-]*")


def _refuse_newer_major(version: SchemaVersion, data: dict[str, Any], what: str) -> None:
    if version.major <= SCHEMA_VERSION.major:
        return
    # A writer of a new major version names the release that reads it (`requires`: the core README's rule).
    requires = data.get("requires")
    if isinstance(requires, str) and _REQUIRES.fullmatch(requires):
        need = requires.replace(" ", "")
        writer, install = f"written by {need.replace('>=', ' >= ')}", f"pip install '{need}'"
    else:
        writer, install = "written by a newer nenyax-core", "pip install --upgrade nenyax-core"
    msg = (
        f"This {what} record has schema version {version}, {writer}, and this nenyax-core ({__version__}) "
        f"reads {SCHEMA_VERSION.major}.x only; {install}."
    )
    raise NewerRecordError(msg)


def _structure_version(value: Any, _cls: Any) -> SchemaVersion:
    # A record read is in this layout from then on (older ones are migrated on the way in); a newer
    # minor keeps its own number, since its unknown fields travel with it.
    return max(SchemaVersion.parse(value), SCHEMA_VERSION)


converter.register_unstructure_hook(SchemaVersion, str)
converter.register_structure_hook(SchemaVersion, _structure_version)

# Tiers are ordered ints in code but words on disk, so reports read well and survive reordering.
converter.register_unstructure_hook(Tier, lambda tier: tier.label)
converter.register_structure_hook(Tier, lambda value, _: Tier[str(value).upper()])


def _is_record(cls: Any) -> bool:
    return isinstance(cls, type) and issubclass(cls, Record) and attrs.has(cls)


def _record_structure(cls: type[Record]) -> Callable[[Any, Any], Record]:
    """Structure the fields `cls` knows; keep the others in `unknown_fields` (a newer minor version's)."""
    known = frozenset(a.alias for a in attrs.fields(cls) if a.init and a.name != "unknown_fields")
    # Extra keys are looked for here, once, so the generated function need not look again.
    inner = make_dict_structure_fn(cls, converter, _cattrs_forbid_extra_keys=False, unknown_fields=override(omit=True))
    name = cls.__name__
    versioned = "schema_version" in known

    def structure(data: Any, _cls: Any) -> Record:
        # Steps are most of what is read (500 per CartPole episode): the common case is two checks.
        if type(data) is dict:
            if versioned and "schema_version" in data:
                _refuse_newer_major(SchemaVersion.parse(data["schema_version"]), data, name)
            if not data.keys() <= known:
                unknown = {k: v for k, v in data.items() if k not in known}
                record = inner({k: v for k, v in data.items() if k in known}, cls)
                return attrs.evolve(record, unknown_fields=read_only_fields(unknown))
        return inner(data, cls)

    return structure


def _record_unstructure(cls: type[Record]) -> Callable[[Record], dict[str, Any]]:
    inner = make_dict_unstructure_fn(cls, converter, unknown_fields=override(omit=True))

    def unstructure(record: Record) -> dict[str, Any]:
        data = inner(record)
        if record.unknown_fields:
            data.update(converter.unstructure(dict(record.unknown_fields)))
        return data

    return unstructure


converter.register_structure_hook_factory(_is_record, _record_structure)
converter.register_unstructure_hook_factory(_is_record, _record_unstructure)

# ---------------------------------------------------------------- arrays

converter.register_unstructure_hook_func(arrays.is_array_type, arrays.encode)

# ---------------------------------------------------------------- migrations

_SAMPLE_AND_AGENT = SchemaVersion(1, 1)


def _migrate_trajectory(data: dict[str, Any]) -> dict[str, Any]:
    """1.0 -> 1.1: `sample` and `agent` move out of `info` into fields of their own."""
    info = data.get("info")
    if not isinstance(info, dict) or not ({"sample", "agent"} & info.keys()):
        return data
    info = dict(info)
    moved = {key: info.pop(key) for key in ("sample", "agent") if key in info and key not in data}
    return {**data, **moved, "info": info}


_structure_trajectory_fields = converter.get_structure_hook(Trajectory)


def _structure_trajectory(data: Any, cls: Any) -> Trajectory:
    if type(data) is dict and "schema_version" in data:
        try:
            older = SchemaVersion.parse(data["schema_version"]) < _SAMPLE_AND_AGENT
        except ValueError:
            older = False  # the version's own hook says what is wrong with it
        if older:
            data = _migrate_trajectory(data)
    return _structure_trajectory_fields(data, cls)  # type: ignore[no-any-return]


converter.register_structure_hook(Trajectory, _structure_trajectory)

# 1.0 -> 1.1: a model call's `latency_s` became `duration_s` (stamped where the call is recorded).
_structure_model_call_fields: Callable[[Any, type[ModelCall]], ModelCall] = converter.get_structure_hook(ModelCall)


def _structure_model_call(data: Any, cls: type[ModelCall]) -> ModelCall:
    if type(data) is dict and "latency_s" in data:
        data = dict(data)
        data.setdefault("duration_s", data.pop("latency_s"))
    return _structure_model_call_fields(data, cls)


converter.register_structure_hook(ModelCall, _structure_model_call)

# ---------------------------------------------------------------- steps, the bulk of every record

# Steps are the bulk of every record (a CartPole episode is 500 of them, one CarRacing observation
# 27,648 numbers) and their free-form fields are JSON data already: walking them element by element
# through cattrs' dispatch cost more than the environment's own step. Values orjson can write as
# they are pass through (not copied); anything else (numpy, sets, attrs objects) takes cattrs' path.
# cattrs.gen builds both: the plain path hands the free-form fields over as they are.
_unstructure_step_by_cattrs: Callable[[Step], dict[str, Any]] = converter.get_unstructure_hook(Step)
_unstructure_plain_step = make_dict_unstructure_fn(
    Step,
    converter,
    observation=override(unstruct_hook=lambda value: value),
    action=override(unstruct_hook=lambda value: value),
    info=override(unstruct_hook=lambda value: value),
    unknown_fields=override(omit=True),
)


# Refused by the check below, so they take cattrs' path: subclasses of builtins, dataclasses and
# datetimes; numpy arrays (encoded by `arrays`) and attrs objects raise anyway. (orjson writes enums by
# value, as cattrs does for every enum but Tier, which nothing puts in a step.)
_PLAIN_ONLY = orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME


def _plain(value: Any) -> bool:
    """True when orjson writes `value` as it is, to the same JSON cattrs' unstructuring would give."""
    try:
        orjson.dumps(value, option=_PLAIN_ONLY)  # C speed, and stops at the first value it refuses
    except TypeError:
        return False
    return True


def _unstructure_step(step: Step) -> dict[str, Any]:
    # One check of the three free-form fields together (a tuple of them is plain exactly when each is).
    if step.unknown_fields or not _plain((step.observation, step.action, step.info)):
        return _unstructure_step_by_cattrs(step)
    return _unstructure_plain_step(step)


converter.register_unstructure_hook(Step, _unstructure_step)

# numpy scalars (np.float32(0.5)) are written by orjson as numbers; arrays never reach it (see above).
_DUMP_OPTIONS = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS


def to_data(obj: Any) -> Any:
    """Unstructure a contract object into plain JSON-able data."""
    return converter.unstructure(obj)


def from_data(data: Any, cls: type[T]) -> T:
    """Structure plain data into `cls`: unknown fields kept, older layouts migrated, a newer major refused."""
    try:
        return converter.structure(data, cls)
    except NewerRecordError:
        raise
    except (cattrs.BaseValidationError, ValueError, TypeError) as exc:
        newer = _newer_inside(exc)
        if newer is not None:  # a nested record (a report's manifest) of a newer major version
            raise newer from None
        details = "; ".join(cattrs.transform_error(exc)) if isinstance(exc, cattrs.BaseValidationError) else str(exc)
        msg = f"Could not read a {cls.__name__} record: {details}."
        raise NenyaxError(msg) from exc


def _newer_inside(exc: BaseException) -> NewerRecordError | None:
    if isinstance(exc, NewerRecordError):
        return exc
    for inner in getattr(exc, "exceptions", ()):
        found = _newer_inside(inner)
        if found is not None:
            return found
    return None


def dumps(obj: Any) -> bytes:
    """Serialize a contract object (or plain data) to compact JSON bytes."""
    return orjson.dumps(to_data(obj), option=_DUMP_OPTIONS)


def loads(raw: bytes | str, cls: type[T]) -> T:
    """Parse JSON bytes into `cls`."""
    return from_data(orjson.loads(raw), cls)


def canonical_json(obj: Any) -> bytes:
    """Deterministic JSON (sorted keys) used for digests."""
    return orjson.dumps(to_data(obj), option=_DUMP_OPTIONS | orjson.OPT_SORT_KEYS)


def digest(obj: Any) -> str:
    """``sha256:<hex>`` of `obj`'s canonical JSON: a manifest's digest changes whenever anything in it changes."""
    return "sha256:" + hashlib.sha256(canonical_json(obj)).hexdigest()
