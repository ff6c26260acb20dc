"""One episode of `acme:reverse`: the question shown, the answer taken, the episode judged.

A session shows observations, applies actions and judges the episode. Beside them: the text codec
(`render`, how a chat model sees the question) and the built-in policies the tiers are measured with.
"""

from __future__ import annotations

import random
import string
from collections.abc import Sequence
from typing import Any

from nenyax.core import Judgment, Session, Step


class ReverseSession(Session):
    """One word to spell backwards; the first answer ends the episode."""

    action_type = str

    def __init__(self, task_id: str, word: str) -> None:
        """Show `word`; nothing is answered yet."""
        self.task_id = task_id
        self.word = word
        self.answer: str | None = None

    @property
    def observation(self) -> str:
        """The question (a native observation: what a plain Python policy sees)."""
        return f"Spell the word {self.word} backwards."

    @property
    def done(self) -> bool:
        """Over after one answer."""
        return self.answer is not None

    def act(self, action: Any) -> Step:
        """Take the answer: reward 1 when it is the word backwards (case and surrounding space aside), else 0."""
        observation = self.observation
        self.answer = str(action).strip().lower()
        reward = 1.0 if self.answer == self.word[::-1] else 0.0
        return Step(observation=observation, action=action, reward=reward, terminated=True)

    def judge(self, steps: Sequence[Step]) -> Judgment:
        """The episode's score is its one step's reward."""
        score = steps[-1].reward if steps else 0.0
        return Judgment(score=score, passed=score == 1.0, judge="acme:exact")

    # The text codec: how a chat model sees the question (its reply is the action, as text).
    def render(self) -> list[dict[str, Any]]:
        """The question as a user message."""
        return [{"role": "user", "content": f"{self.observation} Reply with the letters only."}]

    # The built-in policies the tiers are measured with: the oracle, doing nothing, and garbage.
    def reference_action(self) -> str:
        """The right answer."""
        return self.word[::-1]

    def null_action(self) -> str:
        """No answer."""
        return ""

    def random_action(self, rng: random.Random) -> str:
        """As many random letters as the word has."""
        return "".join(rng.choice(string.ascii_lowercase) for _ in self.word)
