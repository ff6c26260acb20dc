"""The ``incontext`` learner: worked examples from the model's own best episodes, shown in the prompt.

No weight changes, so it improves any model behind an Endpoint (a closed API, the embedded model). An
*example* is one model call that earned its episode the best score of its group (and a score above the
group's worst, so it shows something the others did not): the user turn it answered and the reply it
gave. `policy()` plays the Endpoint with the kept examples inserted before the episode's own first user
turn, as earlier user/assistant exchanges; every call is recorded as the Endpoint records it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from nenyax.core.contract.chat import ChatRequest
from nenyax.core.contract.trajectory import Group, PolicyInfo, Trajectory
from nenyax.core.errors import UsageError
from nenyax.core.models.endpoint import DEFAULT_MODEL, Endpoint

STATE_FILE = "incontext.json"


@attrs.frozen(kw_only=True)
class Example:
    """One worked example: the prompt a model call answered and the reply that scored best."""

    task_id: str | None
    prompt: str
    reply: str
    score: float


def _example(trajectory: Trajectory) -> Example | None:
    # The episode's first call: the user turn it answered and its text reply (tool-call-only replies,
    # or a call with no user turn, make no example).
    for call in trajectory.model_calls:
        users = [m for m in call.messages if m.get("role") == "user" and isinstance(m.get("content"), str)]
        reply = call.response.get("content")
        if users and isinstance(reply, str) and reply.strip():
            score = trajectory.judgment.score if trajectory.judgment is not None else 0.0
            return Example(task_id=trajectory.task_id, prompt=users[-1]["content"], reply=reply, score=score)
    return None


def _good_enough(trajectory: Trajectory, min_score: float) -> bool:
    # The judge's own verdict when it gives one; else the score. A sliver of partial credit is no example.
    judgment = trajectory.judgment
    if judgment is None:
        return False
    if judgment.passed is not None:
        return judgment.passed
    return judgment.score >= min_score


def with_examples(messages: Sequence[Mapping[str, Any]], examples: Sequence[Example]) -> list[dict[str, Any]]:
    """`messages` with each example inserted, as a user turn and the assistant's reply, before the first
    user turn (after any system prompt)."""
    out = [dict(m) for m in messages]
    first_user = next((i for i, m in enumerate(out) if m.get("role") == "user"), len(out))
    shots: list[dict[str, Any]] = []
    for example in examples:
        shots += [{"role": "user", "content": example.prompt}, {"role": "assistant", "content": example.reply}]
    return out[:first_user] + shots + out[first_user:]


class IncontextPolicy:
    """An Endpoint whose every request carries the learner's examples."""

    speaks_text = True

    def __init__(self, endpoint: Endpoint, examples: Sequence[Example], revision: str) -> None:
        self.endpoint, self.examples = endpoint, tuple(examples)
        base = endpoint.info
        self.info = PolicyInfo(
            kind="incontext", name=base.name, provider=base.provider, model=base.model, revision=revision
        )

    async def act(self, turn: Any) -> str:
        """Answer the step transcript, or the native loop's whole request, with the examples prepended."""
        request: ChatRequest = turn.request or ChatRequest(model=self.endpoint.model, messages=tuple(turn.messages))
        request = attrs.evolve(request, messages=tuple(with_examples(request.messages, self.examples)))
        call = await turn.recorder.model_call(request, self.endpoint.send)
        content = call.response.get("content")
        return content if isinstance(content, str) else ""

    async def aclose(self) -> None:
        """Close the endpoint's connections on this loop: a sync `rollouts` call's loop ends after it, and
        `nenyax train` runs one per phase (left open, each loop's client session was reported unclosed)."""
        await self.endpoint.aclose()


class IncontextLearner:
    """Keeps the `examples` best worked examples seen so far, one per task, highest score first."""

    def __init__(
        self,
        model: str | None = None,
        *,
        examples: int = 4,
        temperature: float = 0.7,
        max_tokens: int | None = None,
        max_example_chars: int = 2000,
        min_score: float = 1.0,
    ) -> None:
        """`model`: the ``provider:model`` to prompt (the embedded model when None). Training rollouts sample
        at `temperature`; held-out episodes are played greedily (`eval_policy`). An episode is an example
        only when its judge passed it (or, where the judge says nothing of passing, it scored `min_score`)."""
        if isinstance(examples, bool) or not isinstance(examples, int) or examples < 1:
            msg = f"The incontext learner's examples must be a whole number of at least 1, not {examples!r}."
            raise UsageError(msg)
        self.model = model or DEFAULT_MODEL
        self.limit, self.max_chars, self.min_score = examples, max_example_chars, min_score
        sampling: dict[str, Any] = {} if max_tokens is None else {"max_tokens": max_tokens}
        self._train = Endpoint(self.model, temperature=temperature, **sampling)
        self._eval = Endpoint(self.model, temperature=0.0, **sampling)
        self.examples: tuple[Example, ...] = ()
        self.updates = 0

    @property
    def revision(self) -> str:
        """Names the current examples: ``examples-<updates>-<count>``."""
        return f"examples-{self.updates}-{len(self.examples)}"

    def policy(self) -> IncontextPolicy:
        """The model with the kept examples, sampling at the learner's temperature."""
        return IncontextPolicy(self._train, self.examples, self.revision)

    def eval_policy(self) -> IncontextPolicy:
        """The same, greedy: what held-out episodes are measured with."""
        return IncontextPolicy(self._eval, self.examples, self.revision)

    def update(self, groups: Sequence[Group]) -> dict[str, float]:
        """Take each group's best member if it passed and beat its worst; keep the best `examples`, one per task."""
        found = []
        for group in groups:
            judged = [t for t in group.trajectories if t.judgment is not None]
            if len(judged) < 1:
                continue
            best = max(judged, key=lambda t: t.score or 0.0)
            worst = min(judged, key=lambda t: t.score or 0.0)
            if len(judged) > 1 and (best.score or 0.0) <= (worst.score or 0.0):
                continue  # every member scored the same: nothing to tell them apart by
            if not _good_enough(best, self.min_score):
                continue
            example = _example(best)
            if example is not None and len(example.prompt) + len(example.reply) <= self.max_chars:
                found.append(example)
        pool: dict[str | None, Example] = {}
        for example in sorted([*self.examples, *found], key=lambda e: e.score, reverse=True):
            pool.setdefault(example.task_id if example.task_id is not None else example.prompt, example)
        self.examples = tuple(list(pool.values())[: self.limit])
        self.updates += 1
        return {"examples": float(len(self.examples)), "new_candidates": float(len(found))}

    def save(self, directory: Path) -> str:
        """Write the examples to ``directory/incontext.json``; the revision is that directory."""
        state = {"updates": self.updates, "examples": [attrs.asdict(e) for e in self.examples]}
        (Path(directory) / STATE_FILE).write_text(json.dumps(state, indent=1), encoding="utf-8")
        return str(directory)

    def restore(self, revision: str) -> None:
        """Read back the examples a `save` wrote (in this process or another)."""
        path = Path(revision) / STATE_FILE
        try:
            state = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            msg = f"Cannot restore the incontext learner from {path} ({exc})."
            raise UsageError(msg) from exc
        self.updates = int(state["updates"])
        self.examples = tuple(Example(**e) for e in state["examples"])

    def close(self) -> None:
        """Nothing to release: each loop's connections are closed by the policy at that loop's end (`aclose`)."""
