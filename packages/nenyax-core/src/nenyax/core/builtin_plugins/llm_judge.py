"""Core's `llm` judge: a model reads the episode and a rubric and states a verdict in a fixed form.

    --judge 'llm?rubric=The answer is a single number.'
    --judge 'llm?rubric_file=rubric.txt&scale=10&model=openai:gpt-4o-mini'

Any Endpoint judges (the embedded model by default, offline). The model is told the verdict's form: a last
line ``VERDICT: PASS`` or ``VERDICT: FAIL`` (``scale=pass``: score 1 or 0), or ``SCORE: N`` with N from 0 to
10 (``scale=10``: score N/10). A reply without it is the judge's failure (`VerifierFailure`: the episode is
``verifier_error``, the reply kept among the verdict's model calls), never a score. Sampling is seeded from
the episode (its task, seed and sample) and the judge's own ``seed``, so judging a run again says the same.
"""

from __future__ import annotations

import re
import zlib
from pathlib import Path
from typing import Any

from nenyax.core.contract.chat import ChatRequest
from nenyax.core.contract.trajectory import Judgment, ModelCall, Trajectory
from nenyax.core.engine.sync import run_sync
from nenyax.core.errors import UsageError, VerifierFailure
from nenyax.core.models.endpoint import DEFAULT_MODEL, Endpoint
from nenyax.core.plugins.judge import JudgeCapabilities

SCALES = {"pass": "a last line VERDICT: PASS or VERDICT: FAIL", "10": "a last line SCORE: N, N a whole number 0-10"}
_VERDICT = re.compile(r"VERDICT:\s*\**\s*(PASS|FAIL)\b", re.IGNORECASE)
_SCORE = re.compile(r"SCORE:\s*\**\s*(10|[0-9])(?:\s*/\s*10)?\b", re.IGNORECASE)
_SHOWN = 2000
"""Characters of the task and of the answer the judge is shown, each."""


class LLMJudge:
    """A trajectory judge asking a model for a verdict under a rubric (see the module docstring)."""

    capabilities = JudgeCapabilities(trajectory=True, model=True)

    def __init__(
        self,
        rubric: str | None = None,
        rubric_file: str | None = None,
        model: str = DEFAULT_MODEL,
        scale: str = "pass",
        max_tokens: str | int = 256,
        seed: str | int = 0,
        base_url: str | None = None,
        max_retries: str | int | None = None,
        constrain: str = "auto",
    ) -> None:
        """The rubric inline or from a file; the judging model (``provider:model``, at `base_url` for an
        OpenAI-compatible server, retrying a failed call `max_retries` times where its provider retries);
        the verdict's scale. `constrain`: ``yes`` makes the model answer with the verdict alone, decoded among
        its few possible lines (``guided_choice``: the embedded model and vLLM-compatible servers have it), so a
        small model's verdict is always readable; ``auto`` (the default) does so where the provider says it
        honours ``guided_choice``; ``no`` lets it give its reasons first."""
        if (rubric is None) == (rubric_file is None):
            msg = "The llm judge needs its rubric: rubric=TEXT or rubric_file=PATH (one of them)."
            raise UsageError(msg)
        if rubric_file is not None:
            try:
                rubric = Path(rubric_file).read_text(encoding="utf-8")
            except OSError as exc:
                msg = f"The llm judge cannot read its rubric_file {rubric_file} ({exc.strerror or exc})."
                raise UsageError(msg) from None
        if scale not in SCALES:
            msg = f"The llm judge's scale={scale!r} is not one of {', '.join(SCALES)}."
            raise UsageError(msg)
        self.rubric = str(rubric).strip()
        self.scale = scale
        self.seed = _integer("seed", seed)
        retries = {} if max_retries is None else {"max_retries": _integer("max_retries", max_retries)}
        self.endpoint = Endpoint(
            model,
            base_url=base_url,
            provider_options=retries,
            temperature=0.0,
            max_tokens=_integer("max_tokens", max_tokens),
        )
        self.name = f"llm:{model}"
        if constrain not in ("auto", "yes", "no"):
            msg = f"The llm judge's constrain={constrain!r} is not one of auto, yes, no."
            raise UsageError(msg)
        honours = getattr(self.endpoint.provider, "honours", None) if constrain == "auto" else None
        self.constrained = constrain == "yes" or (honours is not None and "guided_choice" in honours)

    def messages(self, trajectory: Trajectory) -> list[dict[str, str]]:
        """What the judging model is asked: the rubric, the task, the answer, and the verdict's form."""
        task, answer = task_and_answer(trajectory)
        then = (
            f"Reply with {SCALES[self.scale].removeprefix('a last line ')} alone."
            if self.constrained
            else f"Give one or two sentences of reasons, then {SCALES[self.scale]}."
        )
        ask = (
            f"Judge an answer against this rubric.\n\nRubric:\n{self.rubric}\n\nTask:\n{task}\n\nAnswer:\n{answer}\n\n"
            + then
        )
        return [{"role": "system", "content": "You are a strict, fair grader."}, {"role": "user", "content": ask}]

    async def ajudge_trajectory(self, trajectory: Trajectory, reference: Any, calls: list[ModelCall]) -> Judgment:
        """Ask the model; every call it makes is appended to `calls` (kept even when its verdict is unreadable)."""
        identity = f"{trajectory.task_id}:{trajectory.seed}:{trajectory.sample}:{self.seed}"
        request = ChatRequest(
            model=self.endpoint.model,
            messages=tuple(self.messages(trajectory)),
            params={"guided_choice": self.choices()} if self.constrained else {},
            episode_seed=zlib.crc32(identity.encode()),
        )
        call = await self.endpoint.send(request)
        calls.append(call)
        reply = call.response.get("content")
        return self.verdict(reply if isinstance(reply, str) else "")

    def judge_trajectory(self, trajectory: Trajectory, reference: Any) -> Judgment:
        """Synchronous `ajudge_trajectory` (its model calls are not kept: the engine uses the async one)."""
        return run_sync(self.ajudge_trajectory(trajectory, reference, []))

    def choices(self) -> list[str]:
        """Every verdict line, for a constrained reply."""
        if self.scale == "pass":
            return ["VERDICT: PASS", "VERDICT: FAIL"]
        return [f"SCORE: {n}" for n in range(11)]

    async def aclose(self) -> None:
        """Close the judging model's connections."""
        await self.endpoint.aclose()

    def verdict(self, reply: str) -> Judgment:
        """The verdict stated last in `reply`; `VerifierFailure` where it states none."""
        pattern = _VERDICT if self.scale == "pass" else _SCORE
        found = pattern.findall(reply)
        if not found:
            wanted = SCALES[self.scale].removeprefix("a last line ")
            msg = f"The judging model's reply has no {wanted} (it replied {_cut(' '.join(reply.split()), 200)!r})."
            raise VerifierFailure(msg)
        last = found[-1]
        if self.scale == "pass":
            passed = last.upper() == "PASS"
            return Judgment(
                score=float(passed), passed=passed, feedback=_cut(" ".join(reply.split()), 300), judge=self.name
            )
        score = int(last) / 10
        return Judgment(score=score, passed=None, feedback=_cut(" ".join(reply.split()), 300), judge=self.name)


def _integer(name: str, value: str | int) -> int:
    try:
        number = int(value)
    except ValueError:
        number = -1
    if number < 0:
        msg = f"The llm judge's {name}={value!r} is not a whole number of at least 0."
        raise UsageError(msg)
    return number


def task_and_answer(trajectory: Trajectory) -> tuple[str, str]:
    """The task as the policy was first shown it, and its last reply (or last action)."""
    messages = list(trajectory.messages)
    if not messages and trajectory.model_calls:
        last = trajectory.model_calls[-1]
        messages = [*last.messages, last.response]
    users = [m for m in messages if m.get("role") == "user"]
    replies = [m for m in messages if m.get("role") == "assistant"]
    task = _text(users[0].get("content")) if users else ""
    answer = _text(replies[-1].get("content")) if replies else ""
    if not answer and trajectory.steps:
        answer = _text(trajectory.steps[-1].text or trajectory.steps[-1].action)
    if not task and trajectory.steps:
        task = _text(trajectory.steps[0].observation)
    return _cut(task, _SHOWN), _cut(answer, _SHOWN)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + " [...]"


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(str(part.get("text", "")) for part in value if isinstance(part, dict))
    return "" if value is None else str(value)
