"""The one converter between contract types and JSON-able data (and bytes).

No contract class carries serialization code: everything goes through `converter`, so a new
format for persisted records changes this file alone.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, TypeVar

import cattrs
import orjson
from cattrs.gen import make_dict_unstructure_fn, override
from cattrs.preconf.orjson import make_converter

from nenyax.core.contract.manifest import Capabilities
from nenyax.core.contract.schema import SCHEMA_VERSION
from nenyax.core.contract.trajectory import ModelCall, Step, Tier
from nenyax.core.errors import NenyaxError

T = TypeVar("T")

converter = make_converter(forbid_extra_keys=True)
"""The cattrs converter for every contract type (enums by value, tuples as lists)."""

# Tiers are ordered ints in code but words on disk, so reports read well and survive reordering.
converter.register_unstructure_hook(Tier, lambda tier: tier.label)
converter.register_structure_hook(Tier, lambda value, _: Tier[str(value).upper()])

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
)


# Refused by the check below, so they take cattrs' path: subclasses of builtins, dataclasses and
# datetimes; numpy and attrs objects raise anyway. (orjson writes enums by value, as cattrs does for
# every enum but Tier, which nothing puts in a step.)
_PLAIN_ONLY = orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME


def _plain(value: Any) -> bool:
    """True when orjson writes `value` as it is, to the same JSON cattrs' unstructuring would give."""
    try:
        orjson.dumps(value, option=_PLAIN_ONLY)  # C speed, and stops at the first value it refuses
    except TypeError:
        return False
    return True


def _unstructure_step(step: Step) -> dict[str, Any]:
    if _plain(step.observation) and _plain(step.action) and _plain(step.info):
        return _unstructure_plain_step(step)
    return _unstructure_step_by_cattrs(step)


converter.register_unstructure_hook(Step, _unstructure_step)

# `token_level` was a claim nothing verified, so it was retired; older records that carry it still read.
_structure_capabilities = converter.get_structure_hook(Capabilities)
converter.register_structure_hook(
    Capabilities,
    lambda data, cls: _structure_capabilities(
        {k: v for k, v in data.items() if k != "token_level"} if isinstance(data, dict) else data, cls
    ),
)

# `latency_s` became `duration_s` (stamped where the call is recorded); older records still read.
_structure_model_call: Callable[[Any, type[ModelCall]], ModelCall] = converter.get_structure_hook(ModelCall)


def _model_call(data: Any, cls: type[ModelCall]) -> ModelCall:
    if isinstance(data, dict) and "latency_s" in data:
        data = dict(data)
        data.setdefault("duration_s", data.pop("latency_s"))
    return _structure_model_call(data, cls)


converter.register_structure_hook(ModelCall, _model_call)

_DUMP_OPTIONS = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS


def to_data(obj: Any) -> Any:
    """Unstructure a contract object into plain JSON-able data."""
    return converter.unstructure(obj)


def from_data(data: Any, cls: type[T]) -> T:
    """Structure plain data into `cls`, refusing records from a newer schema with a clear error."""
    if isinstance(data, dict):
        version = data.get("schema_version", SCHEMA_VERSION)
        if isinstance(version, int) and version > SCHEMA_VERSION:
            msg = (
                f"This record has schema_version {version}, newer than this nenyax-core "
                f"understands ({SCHEMA_VERSION}); upgrade nenyax-core to read it."
            )
            raise NenyaxError(msg)
    try:
        return converter.structure(data, cls)
    except (cattrs.BaseValidationError, ValueError, TypeError) as exc:
        details = "; ".join(cattrs.transform_error(exc)) if isinstance(exc, cattrs.BaseValidationError) else str(exc)
        msg = f"Could not read a {cls.__name__} record: {details}."
        raise NenyaxError(msg) from exc


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
