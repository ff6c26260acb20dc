"""The `acme:reverse` environment: what it is (its manifest), its task ids, and the sessions it opens."""

from __future__ import annotations

from collections.abc import Sequence

from nenyax.core import BadURIError, Capabilities, Manifest, Mode, Split, StepEnvironment

from nenyax_acme.session import ReverseSession

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


class ReverseEnvironment(StepEnvironment):
    """`acme:reverse`: a step environment (Nenyax's loop drives it), one task per word."""

    def __init__(self, uri: str, words: Sequence[str] = WORDS) -> None:
        """Describe the environment over `words`; nothing else is needed before an episode."""
        self.words = tuple(words)
        super().__init__(
            Manifest(
                uri=uri,
                format="acme",
                format_version="1",
                mode=Mode.STEP,
                name="reverse",
                description="Spell a word backwards: one turn, exact match.",
                splits=(Split(name="all", count=len(self.words)),),
                observation="A sentence naming a word, e.g. 'Spell the word apple backwards.'",
                action="The word spelled backwards, as text.",
                score_range=(0.0, 1.0),
                capabilities=Capabilities(stable_task_ids=True, reference_policy=True, max_turns=1),
            )
        )

    def task_ids(self, split: str | None = None, limit: int | None = None) -> list[str]:
        """``reverse/<word>`` for each word, in order."""
        ids = [f"reverse/{word}" for word in self.words]
        return ids if limit is None else ids[:limit]

    def session(self, task: str | None = None, seed: int | None = None) -> ReverseSession:
        """Open `task` (the first task when none is given); `seed` changes nothing here."""
        task = task or self.task_ids(limit=1)[0]
        word = task.removeprefix("reverse/")
        if not task.startswith("reverse/") or word not in self.words:
            msg = f"{task!r} is not a task of {self.uri}; its tasks are reverse/<word>, e.g. reverse/{self.words[0]}."
            raise BadURIError(msg)
        return ReverseSession(task, word)
