"""``reasoning_gym:<dataset>[,<dataset>...]?size=N&seed=S&<config key>=<value>``: a URI parsed into a dataset spec."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import attrs

from nenyax.core import MAX_SEED, EnvURI
from nenyax.core.errors import BadURIError, did_you_mean
from nenyax.core.toolkit.options import Option, Options
from reasoning_gym.factory import DATASETS

DEFAULT_SEED = 42
"""reasoning-gym picks a random seed when none is given; Nenyax fixes one so task ids are stable."""
DEFAULT_SIZE = 500
"""reasoning-gym's own default size."""
MAX_SIZE = 10**9
"""Entries are generated on demand, so size only bounds task ids; keep it a sane integer."""
OPTIONS = Options(
    "reasoning_gym",
    Option("seed", int, default=DEFAULT_SEED, minimum=0, maximum=MAX_SEED, help="The datasets' seed."),
    Option("size", int, default=DEFAULT_SIZE, minimum=1, maximum=MAX_SIZE, help="How many tasks each seed lists."),
    Option("prompt", str, default="default", help="Which system prompt episodes start with."),
)
"""Query keys the adapter reads itself; every other key is a dataset's config key (``<dataset>.<key>``)."""


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
    read = OPTIONS.read(uri, rest=True)
    seed, size, prompt = read["seed"], read["size"], read["prompt"]
    config: dict[str, dict[str, Any]] = {n: {} for n in names}
    weights = dict.fromkeys(names, 1.0)
    for key, value in read.rest.items():
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
