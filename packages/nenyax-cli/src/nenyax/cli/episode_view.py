"""One trajectory as plain display data: what both the terminal and the HTML replay render.

Both replays read a trajectory only through `episode_view`, so they show the same turns, text,
token counts and verdict; a renderer decides only how things look. Values that are not text
(numeric observations, actions, info) are shown as the JSON the trajectory records them as.
"""

from __future__ import annotations

import ast
import re
from typing import Any

import attrs
import orjson

from nenyax.core.contract import arrays
from nenyax.core.contract.manifest import Mode
from nenyax.core.contract.trajectory import JudgeVerdict, ModelCall, Status, Trajectory

_NO_SCORE = {
    Status.ENV_ERROR: "the environment failed",
    Status.VERIFIER_ERROR: "the verifier failed",
    Status.INFRA_ERROR: "the infrastructure failed",
    Status.TIMEOUT: "the episode ran out of time",
    Status.INTERRUPTED: "the run was interrupted (Ctrl-C)",
}
_STATUS_MEANING = {
    Status.OK: "the episode ran to its end (how well it did is the judgment's to say)",
    Status.POLICY_ERROR: "the policy failed (scored, as a failure)",
    **_NO_SCORE,
}
# The sentence core's judges write (`nenyax.core.engine.answers.quoted`): "answered '4', expected '5' (...)".
_QUOTED = r"""('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")"""
_ANSWERED = re.compile(r"\banswered " + _QUOTED)
_EXPECTED = re.compile(r"\bexpected " + _QUOTED)


def shown(value: Any) -> str:
    """How a recorded value reads: text as it is, anything else as compact JSON (arrays as their numbers)."""
    if isinstance(value, str):
        return value
    readable = _readable(value)
    return orjson.dumps(readable, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY, default=repr).decode()


def _readable(value: Any) -> Any:
    # Core's array records: a short array's numbers as a list; a large one's bytes as a note of what it is.
    if isinstance(value, dict):
        if arrays.is_encoded(value) and isinstance(value[arrays.TAG], str):
            if "values" in value:
                return value["values"]
            return f"<{value[arrays.TAG]} array of shape {tuple(value.get('shape') or ())}>"
        return {k: _readable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_readable(v) for v in value]
    return value


def _quoted_in(pattern: re.Pattern[str], feedback: str) -> str | None:
    found = pattern.search(feedback)
    if found is None:
        return None
    try:
        value = ast.literal_eval(found.group(1))
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, str) else None


def _info_shown(value: Any) -> str:
    # A float to three significant figures: an environment's 0.33333333333333337 reads 0.333.
    if isinstance(value, float) and abs(value) < 1e4:
        return f"{value:.3g}"
    return shown(value)


def _params_text(params: dict[str, Any]) -> str:
    return ", ".join(f"{key}={shown(params[key])}" for key in sorted(params))


def _count(ids: tuple[int, ...] | None, reported: Any) -> int | None:
    if ids is not None:
        return len(ids)
    return reported if isinstance(reported, int) else None


@attrs.frozen(kw_only=True)
class CallView:
    """One model call's size and time."""

    prompt_tokens: int | None
    """None when neither token ids nor usage say."""
    completion_tokens: int | None
    duration_s: float
    queued_s: float
    """Of `duration_s`, the time the call waited to be served."""
    truncated: bool
    """The reply was cut off at its token limit (finish reason ``length``), not ended by the model."""

    @classmethod
    def of(cls, call: ModelCall) -> CallView:
        """Counts from the recorded token ids, else from the server's usage."""
        return cls(
            prompt_tokens=_count(call.prompt_token_ids, call.usage.get("prompt_tokens")),
            completion_tokens=_count(call.completion_token_ids, call.usage.get("completion_tokens")),
            duration_s=call.duration_s,
            queued_s=call.queued_s,
            truncated=call.finish_reason == "length",
        )

    @property
    def summary(self) -> str:
        """``3 prompt / 77 completion tokens, 0.01 s`` (``?`` for a count nobody reported): the call's own
        latency, and the time it waited to be served when it did."""

        def n(count: int | None) -> str:
            return "?" if count is None else str(count)

        cut = ", cut off at the token limit" if self.truncated else ""
        waited = f" (+{self.queued_s:.2f} s queued)" if self.queued_s >= 0.005 else ""
        return (
            f"{n(self.prompt_tokens)} prompt / {n(self.completion_tokens)} completion tokens, "
            f"{self.duration_s - self.queued_s:.2f} s{waited}{cut}"
        )


@attrs.frozen(kw_only=True)
class TurnView:
    """One turn: what the policy saw, what it replied, what was played and what it earned."""

    index: int
    """1-based."""
    observation: str | None
    """The native observation, where the text shown to the model does not already hold it (None for a model
    call of a native loop, which has no step)."""
    prompt: str | None
    """The user message(s) shown to the model before its reply, where they differ from the observation."""
    text: str | None
    """The model's reply (None for a policy that acts without text, or a reply that only calls tools)."""
    call: CallView | None
    """The model call behind the reply, when one was recorded."""
    action: str | None
    """The action played where it is not simply the reply (for a native loop: the tool calls asked for)."""
    info: tuple[tuple[str, str], ...]
    """The environment's info for the step, each value as text (floats to three figures; ``error`` holds
    why a turn failed)."""
    reward: float | None
    """None for a model call of a native loop (its rewards are in the judgment)."""
    ended: str
    """``terminated``, ``truncated`` or empty."""


@attrs.frozen(kw_only=True)
class VerdictView:
    """One judge's verdict on the episode (``--judge``): the format's own first, under ``native``."""

    label: str
    judge: str
    """The judge as asked for (``llm?rubric=...``), or the format's verifier."""
    said: str
    """``score 1 · passed``, or ``failed: why`` where the judge gave no verdict."""
    tone: str
    """``pass``, ``fail``, ``partial`` or ``error``, as `EpisodeView.tone`."""
    feedback: str
    calls: int
    """The judge's own model calls (never the policy's)."""

    @classmethod
    def of(cls, verdict: JudgeVerdict, sep: str = "  ") -> VerdictView:
        judgment = verdict.judgment
        if judgment is None:
            said, tone, feedback = f"failed: {verdict.error or 'no verdict'}", "error", ""
        else:
            passed = "" if judgment.passed is None else (f"{sep}passed" if judgment.passed else f"{sep}not passed")
            said, feedback = f"score {judgment.score:g}{passed}", judgment.feedback
            tone = "partial" if judgment.passed is None else ("pass" if judgment.passed else "fail")
        return cls(
            label=verdict.label,
            judge=verdict.judge,
            said=said,
            tone=tone,
            feedback=feedback,
            calls=len(verdict.model_calls),
        )


@attrs.frozen(kw_only=True)
class EpisodeView:
    """A whole episode ready to display."""

    env_uri: str
    mode: str
    task_id: str | None
    seed: int | None

    @property
    def seed_text(self) -> str:
        """``seed 7``, or ``unseeded`` when the episode recorded none (never ``seed None``)."""
        return "unseeded" if self.seed is None else f"seed {self.seed}"

    policy: str
    """``kind: name`` (the name is the kind when the policy has none)."""
    model: str | None
    """The model the policy called, when it called one."""
    sampling: str | None
    """The sampling settings sent with the model calls (``max_tokens=64, temperature=0.7``; calls that
    differ are joined with ``; ``), None when there were no calls or no settings."""
    revision: str | None
    system: str | None
    """The system prompt a text policy was given (once per episode), where there was one."""
    turns: tuple[TurnView, ...]
    final: str | None
    """Step mode: the observation the episode ended on, after its last step (None when not recorded)."""
    question: str | None
    """What the episode asked: the first observation when it is text, else the first user message."""
    answer: str | None
    """The answer the judge read from the reply (the environment's ``answer`` info, else the feedback's
    ``answered '...'``), when it says."""
    target: str | None
    """The answer the judge expected, where its feedback says (``expected '...'``)."""
    status: Status
    judged: bool
    score: float | None
    passed: bool | None
    feedback: str
    judge: str
    no_score: str | None
    """Why there is no judgment, when there is none."""
    verdicts: tuple[VerdictView, ...] = ()
    """Each judge's verdict, where judges were put on the environment (``--judge``)."""
    error: str | None
    seconds: float | None
    """The episode's wall time."""
    queued_s: float
    """Of `seconds`, the time its model calls waited in queues (for an Endpoint slot, behind other episodes)."""
    calls: int
    completion_tokens: int
    """Over every call whose count is known."""

    @property
    def duration(self) -> str:
        """``1.20 s`` or, when its calls waited, ``1.20 s own (81.70 s wall, 80.50 s queued)``."""
        if self.seconds is None:
            return "?"
        if self.queued_s < 0.005:
            return f"{self.seconds:.2f} s"
        return f"{self.seconds - self.queued_s:.2f} s own ({self.seconds:.2f} s wall, {self.queued_s:.2f} s queued)"

    @property
    def own_seconds(self) -> float | None:
        """The wall time less what the model calls waited in queues."""
        return None if self.seconds is None else self.seconds - self.queued_s

    @property
    def answer_shown(self) -> str | None:
        """The extracted answer as a replay shows it: ``(the whole reply)`` when it is the last reply, whole."""
        reply = next((turn.text for turn in reversed(self.turns) if turn.text), None)
        if self.answer is not None and reply is not None and self.answer == reply.strip():
            return "(the whole reply)"
        return self.answer

    @property
    def cut_after(self) -> int | None:
        """Step mode: how many steps an episode the runner stopped at its step limit played (its last step
        neither terminated nor truncated), None when the episode ended on its own."""
        if self.status is not Status.OK or self.mode != Mode.STEP.value or not self.turns:
            return None
        last = self.turns[-1]
        return None if last.ended or last.reward is None else len(self.turns)

    @property
    def status_meaning(self) -> str:
        """What the status says of the episode (not of its score)."""
        if self.cut_after is not None:
            # `ok` means nothing failed, not that the environment ended: say which, never both.
            steps = self.cut_after
            return f"the episode was cut at its step limit after {steps} step(s), before the environment ended it"
        return _STATUS_MEANING.get(self.status, self.status.value)

    @property
    def tone(self) -> str:
        """How the verdict looks: ``pass``, ``fail``, ``partial`` (scored, no pass/fail) or ``error`` (not judged).

        Follows the judgment, not the status: an episode that ran fine (status ok) and failed is a fail.
        """
        if not self.judged:
            return "error"
        if self.passed is None:
            return "partial"
        return "pass" if self.passed else "fail"

    def verdict(self, sep: str) -> str:
        """``score 1<sep>passed``, ``score 0<sep>not passed``, ``score 0.5`` (judge undecided) or ``not judged``."""
        if not self.judged:
            return "not judged"
        passed = "" if self.passed is None else (f"{sep}passed" if self.passed else f"{sep}not passed")
        return f"score {self.score:g}{passed}"


def prompts_per_turn(traj: Trajectory) -> list[str]:
    """The user message(s) a text policy saw before each of its replies, joined per turn."""
    prompts, pending = [], []
    for message in traj.messages:
        if message.get("role") == "user":
            pending.append(str(message.get("content", "")))
        elif message.get("role") == "assistant":
            prompts.append("\n".join(pending))
            pending = []
    return prompts


def _info_value(value: Any, reply: str | None) -> str:
    # An extracted answer that is the whole reply would print the reply twice.
    if reply and isinstance(value, str) and value == reply.strip():
        return "(the whole reply)"
    return _info_shown(value)


def _step_turns(traj: Trajectory) -> list[TurnView]:
    calls, prompts = list(traj.model_calls), prompts_per_turn(traj)
    turns = []
    for index, step in enumerate(traj.steps, start=1):
        observation: str | None = shown(step.observation)
        prompt = prompts[index - 1] if index - 1 < len(prompts) else None
        if prompt is not None and observation is not None:
            # Each text once: the prompt alone when it holds the observation verbatim, the observation
            # alone when it was the whole prompt.
            if prompt == observation:
                prompt = None
            elif observation in prompt:
                observation = None
        call = calls[index - 1] if step.text is not None and index - 1 < len(calls) else None
        turns.append(
            TurnView(
                index=index,
                observation=observation,
                prompt=prompt,
                text=step.text,
                call=CallView.of(call) if call is not None else None,
                action=shown(step.action) if step.text is None or step.action != step.text else None,
                info=tuple((key, _info_value(value, step.text)) for key, value in step.info.items()),
                reward=step.reward,
                ended="terminated" if step.terminated else "truncated" if step.truncated else "",
            )
        )
    return turns


def _call_turns(traj: Trajectory) -> list[TurnView]:
    # A native loop (rollout or task mode) records model calls but may keep no steps: each call is a turn.
    turns = []
    for index, call in enumerate(traj.model_calls, start=1):
        users = [shown(m.get("content", "")) for m in call.messages if m.get("role") == "user"]
        content = call.response.get("content")
        tool_calls = call.response.get("tool_calls")
        turns.append(
            TurnView(
                index=index,
                observation=None,
                prompt=users[-1] if users else None,
                text=shown(content) if content is not None else None,
                call=CallView.of(call),
                action=shown(tool_calls) if tool_calls else None,
                info=(),
                reward=None,
                ended="",
            )
        )
    return turns


def _sampling(traj: Trajectory) -> str | None:
    settings = list(dict.fromkeys(_params_text(call.params) for call in traj.model_calls if call.params))
    return "; ".join(settings) if settings else None


def _question(traj: Trajectory) -> str | None:
    if traj.steps and isinstance(traj.steps[0].observation, str):
        return traj.steps[0].observation
    messages = traj.messages or (traj.model_calls[0].messages if traj.model_calls else ())
    users = [m.get("content") for m in messages if m.get("role") == "user"]
    return shown(users[0]) if users else None


def _answer(traj: Trajectory) -> str | None:
    last = traj.steps[-1] if traj.steps else None
    if last is not None and "answer" in last.info:
        answer: str | None = shown(last.info["answer"])
    else:
        answer = _quoted_in(_ANSWERED, traj.judgment.feedback) if traj.judgment is not None else None
    return "(none)" if answer == "" else answer  # a reply the judge found no answer in


def episode_view(traj: Trajectory) -> EpisodeView:
    """Everything a replay shows of `traj`."""
    policy = traj.policy
    judgment = traj.judgment
    models = [c.model for c in traj.model_calls if c.model]
    counts = [CallView.of(c).completion_tokens for c in traj.model_calls]
    systems = [str(m.get("content", "")) for m in traj.messages if m.get("role") == "system"]
    return EpisodeView(
        env_uri=traj.env_uri,
        mode=traj.mode.value,
        task_id=traj.task_id,
        seed=traj.seed,
        policy=f"{policy.kind}: {policy.name or policy.kind}",
        model=policy.model or (models[0] if models else None),
        sampling=_sampling(traj),
        revision=policy.revision,
        system="\n".join(systems) if systems else None,
        turns=tuple(_step_turns(traj) if traj.steps else _call_turns(traj)),
        question=_question(traj),
        answer=_answer(traj),
        target=_quoted_in(_EXPECTED, judgment.feedback) if judgment is not None else None,
        status=traj.status,
        judged=judgment is not None,
        score=judgment.score if judgment is not None else None,
        passed=judgment.passed if judgment is not None else None,
        feedback=judgment.feedback if judgment is not None else "",
        judge=judgment.judge if judgment is not None else "",
        no_score=None if judgment is not None else _NO_SCORE.get(traj.status, "the episode was not judged"),
        verdicts=tuple(VerdictView.of(v) for v in traj.verdicts),
        error=traj.error,
        final=shown(traj.final_observation) if traj.final_observation is not None else None,
        seconds=traj.timing.seconds if traj.timing else None,
        queued_s=sum(c.queued_s for c in traj.model_calls),
        calls=len(traj.model_calls),
        completion_tokens=sum(c for c in counts if c is not None),
    )
