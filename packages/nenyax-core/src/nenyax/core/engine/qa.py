"""The single-turn question/answer session every question format shares (reasoning-gym, datasets, ...).

One question is shown; one reply ends the episode; the answer is extracted from the reply by the
shared rules (`nenyax.core.engine.answers`) and judged by an answer judge against each acceptable
reference (the best judgment wins).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from nenyax.core.contract.trajectory import Judgment, Step
from nenyax.core.engine.answers import CONSTANT_ANSWERS, extract_answer, garbage_answer
from nenyax.core.engine.session import Session
from nenyax.core.errors import NenyaxError, UnsupportedPolicyError, VerifierFailure


class QuestionSession(Session):
    """One question judged by `judge` (an `AnswerJudge`) against `references`.

    `references` are what the judge compares with (gold answers, or a format's own entry); `gold`
    is the answer the reference policy gives, or None when the format has none.
    """

    action_type = str

    def __init__(
        self,
        *,
        task_id: str,
        seed: int | None,
        question: str,
        system_prompt: str,
        judge: Any,
        judge_name: str,
        references: Sequence[Any],
        gold: str | None,
        why_no_gold: str = "This task has no reference answer.",
    ) -> None:
        """Hold one question; nothing is judged until `act`."""
        self.task_id = task_id
        self.seed = seed
        self.question = question
        self.system_prompt = system_prompt
        self.answer_judge = judge
        self.judge_name = judge_name
        self.references = tuple(references)
        self.gold = gold
        self.why_no_gold = why_no_gold
        self._judgment: Judgment | None = None

    @property
    def observation(self) -> str:
        """The question text."""
        return self.question

    @property
    def done(self) -> bool:
        """Done once an answer was judged."""
        return self._judgment is not None

    def act(self, action: Any) -> Step:
        """Extract the answer from `action` and judge it; a judge that raises is the verifier's failure."""
        text = "" if action is None else str(action)
        answer = extract_answer(text)
        try:
            judgments = [self.answer_judge.judge(answer, reference) for reference in self.references]
        except Exception as exc:
            reason = str(exc) if isinstance(exc, NenyaxError) else f"{type(exc).__name__}: {exc}"
            msg = f"The {self.judge_name} judge failed on {answer!r}: {reason}"
            raise VerifierFailure(msg) from exc
        if not judgments or not all(isinstance(j, Judgment) for j in judgments):
            kinds = sorted({type(j).__name__ for j in judgments}) or ["nothing"]
            msg = f"The {self.judge_name} judge returned {', '.join(kinds)}, not a Judgment."
            raise VerifierFailure(msg)
        judgment = max(judgments, key=lambda j: j.score)
        self._judgment = judgment
        return Step(
            observation=self.question, action=text, reward=judgment.score, terminated=True, info={"answer": answer}
        )

    def judge(self, steps: Sequence[Step]) -> Judgment:
        """The judgment given when the answer came in."""
        if self._judgment is None:
            msg = "The episode ended without an answer to judge."
            raise VerifierFailure(msg)
        return self._judgment

    def render(self) -> list[dict[str, Any]]:
        """The system prompt (how to give the answer) and the question."""
        return [{"role": "system", "content": self.system_prompt}, {"role": "user", "content": self.question}]

    def reference_action(self) -> str:
        """The gold answer in answer tags."""
        if self.gold is None:
            raise UnsupportedPolicyError(self.why_no_gold)
        return f"<answer>{self.gold}</answer>"

    def constant_actions(self) -> tuple[str, ...]:
        """The common constant answers (the audit adds the gold answers of the sampled tasks)."""
        return CONSTANT_ANSWERS

    def null_action(self) -> str:
        """An empty answer."""
        return ""

    def random_action(self, rng: random.Random) -> str:
        """A garbage answer: random letters and digits."""
        return garbage_answer(rng)
