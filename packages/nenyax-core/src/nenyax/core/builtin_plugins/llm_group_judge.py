"""Core's `llm-group` judge: a model reads the answers of one task's group together and names the best.

    --judge 'llm-group?rubric=The answer is right and says how it got there.'

A group judge (GRPO's relative judging, as ART's RULER does it): the engine holds a group's finished episodes
until all have finished (`nenyax.core.engine.judging.GroupBarrier`), then this judge is shown the task once and
every answer numbered, and asked for a last line ``BEST: N``. The best answer scores 1, the others 0 (no pass
or fail: the verdict is relative). A group of one scores 1 without asking. The model and its options are the
`llm` judge's (the embedded model by default, offline; temperature 0, seeded from the group; ``constrain``
decodes the verdict line among ``BEST: 1`` .. ``BEST: N`` where the provider honours ``guided_choice``). A
reply naming no answer of the group is the judge's failure (`VerifierFailure`), never a score.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence
from typing import Any

from nenyax.core.builtin_plugins.llm_judge import LLMJudge, task_and_answer
from nenyax.core.contract.chat import ChatRequest
from nenyax.core.contract.trajectory import Judgment, ModelCall, Trajectory
from nenyax.core.engine.sync import run_sync
from nenyax.core.errors import VerifierFailure
from nenyax.core.models.endpoint import DEFAULT_MODEL
from nenyax.core.plugins.judge import JudgeCapabilities

_BEST = re.compile(r"BEST:\s*\**\s*(\d+)", re.IGNORECASE)


class LLMGroupJudge:
    """A group judge asking a model which answer of the group is best (see the module docstring)."""

    capabilities = JudgeCapabilities(group=True)

    def __init__(
        self,
        rubric: str | None = None,
        rubric_file: str | None = None,
        model: str = DEFAULT_MODEL,
        max_tokens: str | int = 256,
        seed: str | int = 0,
        base_url: str | None = None,
        max_retries: str | int | None = None,
        constrain: str = "auto",
    ) -> None:
        """The `llm` judge's options, but its scale: the verdict names the best answer."""
        # The llm judge checks the options and holds the model; this one only asks it another question.
        self.asker = LLMJudge(
            rubric=rubric,
            rubric_file=rubric_file,
            model=model,
            max_tokens=max_tokens,
            seed=seed,
            base_url=base_url,
            max_retries=max_retries,
            constrain=constrain,
        )
        self.name = f"llm-group:{model}"

    def messages(self, trajectories: Sequence[Trajectory]) -> list[dict[str, str]]:
        """The rubric, the task once, each answer numbered, and the verdict's form."""
        task, _ = task_and_answer(trajectories[0])
        answers = "\n\n".join(f"Answer {n}:\n{task_and_answer(t)[1]}" for n, t in enumerate(trajectories, 1))
        count = len(trajectories)
        then = (
            f"Reply with BEST: N alone, N the number of the best answer (1 to {count})."
            if self.asker.constrained
            else f"Give one or two sentences of reasons, then a last line BEST: N, N from 1 to {count}."
        )
        ask = (
            f"Compare {count} answers to one task against this rubric and name the best.\n\n"
            f"Rubric:\n{self.asker.rubric}\n\nTask:\n{task}\n\n{answers}\n\n{then}"
        )
        return [{"role": "system", "content": "You are a strict, fair grader."}, {"role": "user", "content": ask}]

    async def ajudge_group(
        self, trajectories: Sequence[Trajectory], reference: Any, calls: list[ModelCall]
    ) -> list[Judgment]:
        """Ask the model once for the group; its call is appended to `calls` (kept even when unreadable)."""
        count = len(trajectories)
        if count == 1:
            return [Judgment(score=1.0, feedback="alone in its group", judge=self.name)]
        first = trajectories[0]
        identity = f"{first.task_id}:{first.seed}:{[t.sample for t in trajectories]}:{self.asker.seed}"
        choices = [f"BEST: {n}" for n in range(1, count + 1)]
        request = ChatRequest(
            model=self.asker.endpoint.model,
            messages=tuple(self.messages(trajectories)),
            params={"guided_choice": choices} if self.asker.constrained else {},
            episode_seed=zlib.crc32(identity.encode()),
        )
        call = await self.asker.endpoint.send(request)
        calls.append(call)
        reply = call.response.get("content")
        text = " ".join(reply.split()) if isinstance(reply, str) else ""
        named = [int(n) for n in _BEST.findall(text)]
        if not named or not 1 <= named[-1] <= count:
            msg = (
                f"The judging model's reply names no answer from BEST: 1 to BEST: {count} (it replied {text[:200]!r})."
            )
            raise VerifierFailure(msg)
        best = named[-1]
        return [
            Judgment(score=float(n == best), feedback=text[:300] if n == best else "", judge=self.name)
            for n in range(1, count + 1)
        ]

    def judge_group(self, trajectories: Sequence[Trajectory], reference: Any) -> list[Judgment]:
        """Synchronous `ajudge_group` (its model call is not kept: the engine uses the async one)."""
        return run_sync(self.ajudge_group(trajectories, reference, []))

    async def aclose(self) -> None:
        """Close the judging model's connections."""
        await self.asker.aclose()
