"""``hf:<path>?prompt_column=..&answer_column=..&judge=..``: a URI parsed into a dataset spec."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from nenyax.core.contract.uri import EnvURI
from nenyax.core.errors import BadURIError

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
