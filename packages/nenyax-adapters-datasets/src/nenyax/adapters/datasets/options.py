"""``hf:<path>?prompt_column=..&answer_column=..&judge=..``: a URI parsed into a dataset spec."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from nenyax.core import EnvURI
from nenyax.core.toolkit.options import Option, Options

SYSTEM_PROMPT = (
    "Answer the question. Think step by step if it helps, then give only the final answer "
    "inside <answer></answer>, for example <answer>42</answer>."
)
OPTIONS = Options(
    "hf",
    Option("prompt_column", str, help="The column holding the question (default: found by name)."),
    Option("answer_column", str, help="The column holding the gold answer (default: found by name)."),
    Option("id_column", str, help="The column holding each row's task id (default: the row's number)."),
    Option("split", str, help="The split to read (default: the only one, or train)."),
    Option(
        "choices_column",
        str,
        help="The column holding each task's options (default under judge=choice: choices or options, if present).",
    ),
    Option("judge", str, default="exact", help="The judge plugin comparing answers (exact, numeric, math, choice...)."),
    Option("tolerance", float, help="Shorthand for judge.tolerance."),
    Option("system_prompt", str, default=SYSTEM_PROMPT, help="The first message of every episode."),
    prefixes=("judge",),
)
"""Query keys of the adapter; ``judge.<option>=value`` keys go to the judge's factory."""


@attrs.frozen(kw_only=True)
class DatasetSpec:
    """What a URI asks for: which file, which columns, which judge and its options."""

    path: Path
    prompt_column: str | None
    answer_column: str | None
    id_column: str | None
    choices_column: str | None
    split: str | None
    judge: str
    judge_options: dict[str, Any]
    system_prompt: str


def parse_spec(uri: EnvURI) -> DatasetSpec:
    """Validate the query keys of `uri` (the file and its columns are checked when loading)."""
    read = OPTIONS.read(uri)
    judge_options = dict(read.prefixed["judge"])
    if read["tolerance"] is not None:
        judge_options["tolerance"] = read["tolerance"]
    return DatasetSpec(
        path=Path(uri.target),  # expanded (and checked) when loading
        prompt_column=read["prompt_column"],
        answer_column=read["answer_column"],
        id_column=read["id_column"],
        choices_column=read["choices_column"],
        split=read["split"],
        judge=read["judge"],
        judge_options=judge_options,
        system_prompt=read["system_prompt"],
    )
