"""``reasoning_gym:<dataset>[,<dataset>...]?size=N&seed=S&<config key>=<value>``: a URI parsed into a dataset spec."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import attrs

from nenyax.core.contract.uri import MAX_SEED, EnvURI
from nenyax.core.errors import BadURIError, did_you_mean
from reasoning_gym.factory import DATASETS

DEFAULT_SEED = 42
"""reasoning-gym picks a random seed when none is given; Nenyax fixes one so task ids are stable."""
DEFAULT_SIZE = 500
"""reasoning-gym's own default size."""
MAX_SIZE = 10**9
"""Entries are generated on demand, so size only bounds task ids; keep it a sane integer."""
ADAPTER_KEYS = ("prompt",)
"""Query keys the adapter consumes itself instead of passing to the dataset's config."""


@attrs.frozen(kw_only=True)
class DatasetSpec:
    """What a URI asks for: one dataset or a weighted composite, with config and seed."""

    target: str
    names: tuple[str, ...]
    seed: int
    size: int
    config: dict[str, dict[str, Any]]
    """Per-dataset config keys (for a single dataset, under its own name)."""
    weights: dict[str, float]
    prompt: str = "default"


def _config_fields(name: str) -> set[str]:
    return {f.name for f in dataclasses.fields(DATASETS[name][1])} - {"seed", "size"}


def _int_param(params: dict[str, Any], key: str, default: int, minimum: int, maximum: int, uri: str) -> int:
    value = params.pop(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
        msg = f"{key} in {uri!r} must be an integer from {minimum} to {maximum}, got {value!r}."
        raise BadURIError(msg)
    return value


def parse_spec(uri: EnvURI) -> DatasetSpec:
    """Validate the dataset names and query keys of `uri` against reasoning-gym's registry."""
    names = tuple(n.strip() for n in uri.target.split(",") if n.strip())
    if names == ("composite",) or not names:
        msg = "Name the datasets to combine, e.g. 'reasoning_gym:chain_sum,leg_counting?seed=3'."
        raise BadURIError(msg)
    for name in names:
        if name not in DATASETS or name == "composite":
            msg = f"reasoning-gym has no dataset {name!r}." + did_you_mean(
                name, set(DATASETS) - {"composite"}, "dataset"
            )
            raise BadURIError(msg)
    if len(set(names)) != len(names):
        msg = f"{uri.raw!r} names a dataset twice."
        raise BadURIError(msg)
    params = dict(uri.params)
    seed = _int_param(params, "seed", DEFAULT_SEED, 0, MAX_SEED, uri.raw)
    size = _int_param(params, "size", DEFAULT_SIZE, 1, MAX_SIZE, uri.raw)
    prompt = str(params.pop("prompt", "default"))
    config: dict[str, dict[str, Any]] = {n: {} for n in names}
    weights = dict.fromkeys(names, 1.0)
    for key, value in params.items():
        owner, _, field = key.rpartition(".")
        if not owner and len(names) == 1:
            owner = names[0]
        if owner not in config:
            msg = (
                f"In a composite URI, prefix each config key with its dataset, e.g. '{names[0]}.{field}=...'; "
                f"{key!r} names no dataset of {', '.join(names)}."
            )
            raise BadURIError(msg)
        if field == "weight" and len(names) > 1:
            if not isinstance(value, int | float) or isinstance(value, bool) or not 0 < value < math.inf:
                msg = f"{key} must be a positive number, got {value!r}."
                raise BadURIError(msg)
            weights[owner] = float(value)
            continue
        known = _config_fields(owner)
        if field not in known:
            msg = f"{owner} has no config key {field!r}." + did_you_mean(field, known, "config key")
            raise BadURIError(msg)
        config[owner][field] = tuple(value) if isinstance(value, list) else value
    return DatasetSpec(
        target=",".join(names), names=names, seed=seed, size=size, config=config, weights=weights, prompt=prompt
    )
