"""``hf:<path>?prompt_column=..&answer_column=..&judge=..``: URI to a loaded question/answer dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from nenyax.adapters.datasets.environment import DatasetEnvironment
from nenyax.core.errors import BadURIError, UnknownPluginError, UsageError
from nenyax.core.registry import default_registry
from nenyax.core.uri import (
    EnvURI,
    parse_uri,  # noqa: F401 - re-exported for tests that build URIs
)

ADAPTER_KEYS = ("prompt_column", "answer_column", "id_column", "split", "judge", "tolerance", "system_prompt")
"""Query keys of the adapter; ``judge.<option>=value`` keys go to the judge's factory."""
SYSTEM_PROMPT = (
    "Answer the question. Think step by step if it helps, then give only the final answer "
    "inside <answer></answer>, for example <answer>42</answer>."
)


@attrs.frozen(kw_only=True)
class DatasetSpec:
    """What a URI asks for: which file, which columns, which judge and its options."""

    path: Path
    prompt_column: str | None
    answer_column: str | None
    id_column: str | None
    split: str | None
    judge: str
    judge_options: dict[str, Any]
    system_prompt: str


def _optional_str(params: dict[str, Any], key: str) -> str | None:
    value = params.pop(key, None)
    return None if value is None else str(value)


def parse_spec(uri: EnvURI) -> DatasetSpec:
    """Validate the query keys of `uri` (the file and its columns are checked when loading)."""
    params = dict(uri.params)
    judge_options = {k.split(".", 1)[1]: params.pop(k) for k in list(params) if k.startswith("judge.")}
    if "tolerance" in params:
        judge_options["tolerance"] = params.pop("tolerance")
    spec = DatasetSpec(
        path=Path(uri.target),  # expanded (and checked) when loading
        prompt_column=_optional_str(params, "prompt_column"),
        answer_column=_optional_str(params, "answer_column"),
        id_column=_optional_str(params, "id_column"),
        split=_optional_str(params, "split"),
        judge=str(params.pop("judge", "exact")),
        judge_options=judge_options,
        system_prompt=str(params.pop("system_prompt", SYSTEM_PROMPT)),
    )
    if params:
        from nenyax.core.errors import did_you_mean

        key = sorted(params)[0]
        msg = f"The hf adapter has no option {key!r}." + did_you_mean(key, ADAPTER_KEYS, "option")
        raise BadURIError(msg)
    return spec


def make_judge(name: str, options: dict[str, Any]) -> Any:
    """The judge plugin `name` from the registry (so a third-party judge works by name), built with `options`."""
    registry = default_registry()
    try:
        registry.get("judge", name)
    except UnknownPluginError as exc:
        raise BadURIError(str(exc).replace("No judge named", "No judge plugin named")) from exc
    factory = registry.factory("judge", name)
    try:
        judge = factory(**options)
    except UsageError:
        raise
    except TypeError as exc:
        msg = f"The judge {name!r} does not take the options {sorted(options)} ({exc})."
        raise BadURIError(msg) from exc
    if not callable(getattr(judge, "judge", None)):
        msg = (
            f"The judge plugin {name!r} returned {type(judge).__name__}, which has no judge(answer, reference) method."
        )
        raise BadURIError(msg)
    return judge


class DatasetsAdapter:
    """The ``hf`` adapter: a local JSONL/JSON/Parquet/CSV file or save_to_disk folder, one question per row."""

    def load(self, uri: EnvURI) -> DatasetEnvironment:
        """Load the dataset offline and resolve its columns and judge; every mistake is one `BadURIError` sentence."""
        spec = parse_spec(uri)
        judge = make_judge(spec.judge, spec.judge_options)
        return DatasetEnvironment(uri.raw, spec, judge)

    def examples(self) -> list[str]:
        """A dataset that ships with this adapter (a few arithmetic questions), judged two ways."""
        sample = Path(__file__).with_name("sample.jsonl")
        return [f"hf:{sample}", f"hf:{sample}?judge=numeric&id_column=id"]
