"""Providers and judges for the provider and judge kits' own tests: a sound one of each, and broken
variants, one flaw each, that prove each kit check can fail (`nenyax_testsupport.fakes` has those of the
checks every kind shares).

Why fakes: no real provider or judge is broken in exactly one known way, and nenyax-core's tests run
with core alone (the real ones pass the kits in their own distributions' tests).
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from typing import Any

import attrs

from nenyax.core.contract.chat import ChatRequest, Delta
from nenyax.core.contract.trajectory import Judgment, ModelCall, Trajectory
from nenyax.core.errors import VerifierFailure
from nenyax.core.plugins.judge import JudgeCapabilities

# ---------------------------------------------------------------- providers


class ParrotProvider:
    """A sound in-process provider: replies ``hello``, one token per UTF-8 byte, each of logprob -0.5."""

    name = "parrot"
    honours = frozenset({"max_tokens", "temperature", "seed"})
    reply = "hello"

    def __init__(self, *, base_url: str | None = None, api_key: str | None = None) -> None:
        """Take the options every provider is given (an in-process one ignores them)."""
        self.closed = 0

    def prepare(self, model: str) -> None:
        """Nothing to load: it is what makes the kit treat it as in-process."""

    def _call(self, request: ChatRequest) -> ModelCall:
        ids = tuple(self.reply.encode())
        return ModelCall(
            messages=request.messages,
            response={"role": "assistant", "content": self.reply},
            provider=self.name,
            model=request.model,
            prompt_token_ids=(1, 2, 3),
            completion_token_ids=ids,
            logprobs=(-0.5,) * len(ids),
            tokens=tuple(chr(i) for i in ids),
        )

    async def complete(self, request: ChatRequest) -> ModelCall:
        """The recorded reply."""
        return self._call(request)

    async def stream(self, request: ChatRequest) -> AsyncIterator[Delta | ModelCall]:
        """The reply one character at a time, then the recorded call."""
        for character in self.reply:
            yield Delta(text=character, token_ids=tuple(character.encode()))
        yield self._call(request)

    async def aclose(self) -> None:
        """Nothing to release; counts the calls."""
        self.closed += 1


class BlockingProvider(ParrotProvider):
    """Flaw: `complete` is a plain method, which blocks the caller's event loop and cannot be awaited."""

    def complete(self, request: ChatRequest) -> ModelCall:  # type: ignore[override]
        return self._call(request)


class StringHonoursProvider(ParrotProvider):
    """Flaw: ``honours`` is one string, not a set of field names."""

    honours = "max_tokens temperature"  # type: ignore[assignment]


class ForgetfulProvider(ParrotProvider):
    """Flaw: the recorded call drops the request's messages."""

    async def complete(self, request: ChatRequest) -> ModelCall:
        return attrs.evolve(self._call(request), messages=())


class MisalignedProvider(ParrotProvider):
    """Flaw: one logprob fewer than the completion's tokens."""

    async def complete(self, request: ChatRequest) -> ModelCall:
        call = self._call(request)
        return attrs.evolve(call, logprobs=(call.logprobs or ())[:-1])


class UnfinishedStreamProvider(ParrotProvider):
    """Flaw: the stream ends without the recorded call."""

    async def stream(self, request: ChatRequest) -> AsyncIterator[Delta | ModelCall]:
        for character in self.reply:
            yield Delta(text=character)


class CloseOnceProvider(ParrotProvider):
    """Flaw: a second `aclose` raises."""

    async def aclose(self) -> None:
        self.closed += 1
        if self.closed > 1:
            msg = "already closed"
            raise RuntimeError(msg)


# ---------------------------------------------------------------- judges


class GoldJudge:
    """A sound answer judge: 1 when the answer is the text gold answer, ignoring surrounding space."""

    capabilities = JudgeCapabilities(answer=True)

    def judge(self, answer: str, reference: Any) -> Judgment:
        """Refuse, in a sentence, a gold answer that is not text or is empty."""
        if not isinstance(reference, str) or not reference.strip():
            msg = f"The gold judge needs a gold answer as text, not {reference!r}."
            raise VerifierFailure(msg)
        ok = answer.strip() == reference.strip()
        return Judgment(score=float(ok), passed=ok, judge="gold")


class BareScoreJudge(GoldJudge):
    """Flaw: returns the score alone, a float, instead of a `Judgment`."""

    def judge(self, answer: str, reference: Any) -> Judgment:
        return super().judge(answer, reference).score  # type: ignore[return-value]


class AlwaysRightJudge(GoldJudge):
    """Flaw: every answer scores 1 and passes."""

    def judge(self, answer: str, reference: Any) -> Judgment:
        super().judge(answer, reference)  # still refuses what it cannot use
        return Judgment(score=1.0, passed=True, judge="always")


class UncheckedReferenceJudge:
    """Flaw: reads the gold as an integer without checking, so another reference is a raw TypeError or ValueError."""

    capabilities = JudgeCapabilities(answer=True)

    def judge(self, answer: str, reference: Any) -> Judgment:
        ok = answer.strip() == str(int(reference))
        return Judgment(score=float(ok), passed=ok, judge="unchecked")


class NoisyJudge(GoldJudge):
    """Flaw: a right answer's score is drawn at random, so the same answer is judged differently each time."""

    def judge(self, answer: str, reference: Any) -> Judgment:
        made = super().judge(answer, reference)
        return attrs.evolve(made, score=made.score * random.uniform(0.5, 1.0))


class UncheckedSettingsTrajectoryJudge:
    """Flaw: a trajectory judge that reads its reference as a mapping unchecked (``"4"`` is an AttributeError)."""

    capabilities = JudgeCapabilities(trajectory=True)

    def judge_trajectory(self, trajectory: Trajectory, reference: Any) -> Judgment:
        threshold = None if reference is None else reference.get("threshold")
        total = sum(step.reward for step in trajectory.steps)
        return Judgment(score=total, passed=None if threshold is None else total >= threshold, judge="unchecked")


def sum_is_right(trajectory: Trajectory) -> bool | None:
    """Whether the last action answers the first observation's ``a + b`` or ``a - b`` (None: no such question)."""
    import re

    asked = re.search(r"(-?\d+)\s*([+-])\s*(-?\d+)", str(trajectory.steps[0].observation)) if trajectory.steps else None
    if asked is None:
        return None
    left, sign, right = int(asked[1]), asked[2], int(asked[3])
    return str(trajectory.steps[-1].action).strip() == str(left + right if sign == "+" else left - right)


class ZeroForUnreadableModelJudge:
    """Flaw: a judge asking a model that scores a reply stating no verdict 0, instead of failing.

    Its synchronous verdict computes the sum itself (sound, so only the unreadable-verdict check fails); its
    async one asks the model at `base_url` for ``VERDICT: PASS|FAIL``."""

    capabilities = JudgeCapabilities(trajectory=True, model=True)

    def __init__(self, model: str = "openai:kit", base_url: str | None = None) -> None:
        self.model, self.base_url = model, base_url

    def judge_trajectory(self, trajectory: Trajectory, reference: Any) -> Judgment:
        right = sum_is_right(trajectory)
        if right is None:
            return Judgment(score=0.0, passed=False, judge="zero-for-unreadable", feedback="no sum asked")
        return Judgment(score=float(right), passed=right, judge="zero-for-unreadable")

    async def ajudge_trajectory(self, trajectory: Trajectory, reference: Any, calls: list[ModelCall]) -> Judgment:
        from nenyax.core.models.endpoint import Endpoint

        endpoint = Endpoint(self.model, base_url=self.base_url)
        try:
            call = await endpoint.send(ChatRequest(model=self.model, messages=({"role": "user", "content": "Judge."},)))
        finally:
            await endpoint.aclose()
        calls.append(call)
        passed = "VERDICT: PASS" in str(call.response.get("content"))
        return Judgment(score=float(passed), passed=passed, judge="zero-for-unreadable")
