"""The demo as a legacy verifiers `SingleTurnEnv` (verifiers 0.3): imported only when that API is installed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def build(rows: Sequence[tuple[str, str]], system_prompt: str) -> Any:
    """A `SingleTurnEnv` over `rows` (question, answer), rewarding a boxed answer equal to the gold one."""
    from datasets import Dataset

    import verifiers as vf

    parser = vf.Parser(extract_fn=vf.extract_boxed_answer)

    def correct_answer(completion: Any, answer: str, **_kwargs: Any) -> float:
        return 1.0 if (parser.parse_answer(completion) or "").strip() == answer else 0.0

    dataset = Dataset.from_list([{"question": q, "answer": a} for q, a in rows])
    rubric = vf.Rubric(funcs=[correct_answer], weights=[1.0], parser=parser)
    return vf.SingleTurnEnv(dataset=dataset, system_prompt=system_prompt, parser=parser, rubric=rubric)
