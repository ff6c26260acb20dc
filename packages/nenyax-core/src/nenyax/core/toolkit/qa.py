"""Question/answer environments: one question, one reply, the answer extracted and judged.

A question format (a dataset, reasoning-gym, ...) builds on these rather than copying them: the
session (`QuestionSession`), the answer rules the system prompt teaches (`ANSWER_RULES`), how an
answer is found in a reply (`extract_answer`, `last_boxed`), how a judge quotes it (`quoted`), and
the capabilities every single-question environment declares (`question_capabilities`).
"""

from __future__ import annotations

from nenyax.core.contract.manifest import Capabilities
from nenyax.core.engine.answers import ANSWER_RULES, extract_answer, last_boxed, quoted
from nenyax.core.engine.qa import QuestionSession

__all__ = ["ANSWER_RULES", "QuestionSession", "extract_answer", "last_boxed", "question_capabilities", "quoted"]


def question_capabilities(*, seeded: bool, reference_policy: bool) -> Capabilities:
    """What a one-question, one-reply environment with stable task ids declares."""
    return Capabilities(
        seeded=seeded, stable_task_ids=True, reference_policy=reference_policy, multi_turn=False, max_turns=1
    )
