"""A legacy verifiers `ToolEnv` built offline: multiplication questions with a `multiply` tool the
environment's own loop executes, graded on the final number (``verifiers:vf-tools-legacy``)."""

import verifiers as vf
from datasets import Dataset

ROWS = [("What is 6 times 7?", "42"), ("What is 12 times 11?", "132"), ("What is 9 times 8?", "72")]
SYSTEM = "Use the multiply tool to compute the product, then reply with the number only."


def multiply(a: int, b: int) -> int:
    """Multiply two integers.

    Args:
        a: the first factor
        b: the second factor
    """
    return a * b


def correct_answer(completion, answer, **kwargs):
    """1 when the last assistant message is the gold number."""
    last = next((m for m in reversed(completion) if m.get("role") == "assistant"), {})
    return 1.0 if str(last.get("content") or "").strip() == answer else 0.0


def load_environment():
    dataset = Dataset.from_list([{"question": q, "answer": a} for q, a in ROWS])
    rubric = vf.Rubric(funcs=[correct_answer], weights=[1.0])
    return vf.ToolEnv(tools=[multiply], max_turns=4, system_prompt=SYSTEM, eval_dataset=dataset, rubric=rubric)
