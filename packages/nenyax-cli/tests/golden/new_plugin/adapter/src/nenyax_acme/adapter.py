"""The `acme` format: URIs `acme:<environment>` load here. This is the file to make your own.

Its one environment, `acme:reverse`, shows a word and asks for it spelled backwards: one turn, judged
by exact match. It claims only what `nenyax check` can prove of it (stable task ids, a reference policy),
and so reaches the audited tier. To load your own format, keep the shape: `load` parses the URI and
builds the environment (raising `BadURIError`, one sentence, for what does not exist); the environment
lists task ids and opens sessions; a session shows observations, applies actions and judges the episode.
"""

from __future__ import annotations

import random
import string
from collections.abc import Sequence
from typing import Any

from nenyax.core import (
    BadURIError,
    Capabilities,
    EnvURI,
    Judgment,
    LoadContext,
    Manifest,
    Mode,
    Session,
    Split,
    Step,
    StepEnvironment,
)

WORDS = (
    "apple",
    "banana",
    "cherry",
    "garden",
    "island",
    "jungle",
    "kettle",
    "lemon",
    "marble",
    "needle",
    "orange",
    "pepper",
    "rabbit",
    "silver",
    "tunnel",
    "velvet",
    "window",
    "yellow",
    "zipper",
    "anchor",
)
"""One task per word: its task id is ``reverse/<word>``, the same in every process (`stable_task_ids`)."""


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


class ReverseEnvironment(StepEnvironment):
    """`acme:reverse`: a step environment (Nenyax's loop drives it), one task per word."""

    def __init__(self, uri: str) -> None:
        """Describe the environment; nothing else is needed before an episode."""
        super().__init__(
            Manifest(
                uri=uri,
                format="acme",
                format_version="1",
                mode=Mode.STEP,
                name="reverse",
                description="Spell a word backwards: one turn, exact match.",
                splits=(Split(name="all", count=len(WORDS)),),
                observation="A sentence naming a word, e.g. 'Spell the word apple backwards.'",
                action="The word spelled backwards, as text.",
                score_range=(0.0, 1.0),
                capabilities=Capabilities(stable_task_ids=True, reference_policy=True, max_turns=1),
            )
        )

    def task_ids(self, split: str | None = None, limit: int | None = None) -> list[str]:
        """``reverse/<word>`` for each word, in order."""
        ids = [f"reverse/{word}" for word in WORDS]
        return ids if limit is None else ids[:limit]

    def session(self, task: str | None = None, seed: int | None = None) -> ReverseSession:
        """Open `task` (the first task when none is given); `seed` changes nothing here."""
        task = task or self.task_ids(limit=1)[0]
        word = task.removeprefix("reverse/")
        if not task.startswith("reverse/") or word not in WORDS:
            msg = f"{task!r} is not a task of {self.uri}; its tasks are reverse/<word>, e.g. reverse/{WORDS[0]}."
            raise BadURIError(msg)
        return ReverseSession(task, word)


class AcmeAdapter:
    """The `acme` adapter (what the plugin's factory returns): loads `acme:reverse`."""

    def load(self, uri: EnvURI, context: LoadContext) -> ReverseEnvironment:
        """The environment `uri` names; anything else is one `BadURIError` sentence saying what exists."""
        if uri.target != "reverse":
            msg = f"The acme format has one environment, 'reverse'; there is no {uri.target!r}."
            raise BadURIError(msg)
        if uri.params:
            msg = f"acme:reverse takes no options, so not {', '.join(map(repr, uri.params))}."
            raise BadURIError(msg)
        return ReverseEnvironment(uri.raw)

    def examples(self) -> list[str]:
        """URIs that load here, offline: the conformance kit checks each."""
        return ["acme:reverse"]
