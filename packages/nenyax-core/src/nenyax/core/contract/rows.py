"""Row shapes made from trajectories, once for every exporter: raw, SFT (or its tokens), DPO and token samples.

Exporters are writers; what goes in a row is decided here, so every destination gets the same rows, and
`schema` says their columns (`nenyax.core.contract.row_schema`). Shapes follow TRL's conversational
dataset formats (``messages`` + ``tools``; ``prompt``/``chosen``/``rejected``; ``input_ids`` +
``assistant_masks`` for rows TRL takes as already tokenized). `rows` is the one entry point: it takes
trajectories and groups them itself (by ``group_id``) where a shape compares members of a group.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import attrs
import orjson

from nenyax.core.contract import arrays, samples, serde
from nenyax.core.contract.row_schema import DPO, MERGED, RAW, SFT, SFT_TOKENS, STEPS, RowSchema
from nenyax.core.contract.trajectory import Group, Status, Trajectory
from nenyax.core.errors import UsageError, did_you_mean

SHAPES = ("raw", "sft", "dpo", "merged", "steps")
"""The row shapes every exporter accepts (``merged`` and ``steps``: token samples, `nenyax.core.contract.samples`)."""


@attrs.frozen(kw_only=True)
class RowOptions:
    """What a shape may be asked for beyond its name."""

    tokenized: bool = False
    """sft only: the exact recorded ``input_ids`` and an ``assistant_masks`` instead of ``messages``."""
    min_score: float | None = None
    """sft only: leave out trajectories scored below this."""


def check_shape(shape: str, options: RowOptions = RowOptions()) -> None:
    """Refuse, in one sentence, an unknown shape or an option the shape does not take."""
    if shape not in SHAPES:
        raise UsageError(f"There is no row shape {shape!r}." + did_you_mean(shape, SHAPES, "row shape"))
    if shape != "sft" and options.tokenized:
        raise UsageError(f"Only sft rows come pre-tokenized, not {shape} rows; drop --tokenized or use --rows sft.")
    if shape != "sft" and options.min_score is not None:
        raise UsageError(f"--min-score filters sft rows only, not {shape} rows; drop it or use --rows sft.")


def schema(shape: str, options: RowOptions = RowOptions()) -> RowSchema:
    """The columns of `shape`'s rows."""
    check_shape(shape, options)
    if shape == "raw":
        return RAW
    if shape == "dpo":
        return DPO
    if shape in ("merged", "steps"):
        return MERGED if shape == "merged" else STEPS
    return SFT_TOKENS if options.tokenized else SFT


def rows(
    trajectories: Iterable[Trajectory], shape: str, options: RowOptions = RowOptions()
) -> Iterator[dict[str, Any]]:
    """The rows of `shape` for `trajectories`, in order (dpo: one per group, in order of each group's first member).

    A trajectory that cannot make a row of the shape is left out (sft: not ``ok``, below `min_score`, no
    assistant turn, or, tokenized, no exact token ids; dpo: a group without a preference; merged and steps:
    no model call with token ids). merged and steps rows keep every status: ``trainable`` and ``reward``
    (None, never 0, for an infrastructure failure) say which a trainer may learn from.
    """
    check_shape(shape, options)
    if shape == "raw":
        yield from (raw_row(t) for t in trajectories)
    elif shape == "sft" and options.tokenized:
        yield from (row for t in trajectories if _sft_wanted(t, options) and (row := sft_tokens_row(t)) is not None)
    elif shape == "sft":
        yield from (row for t in trajectories if _sft_wanted(t, options) and (row := sft_row(t)) is not None)
    elif shape == "dpo":
        yield from (row for g in groups(trajectories) if (row := dpo_row(g)) is not None)
    else:
        yield from (row for t in trajectories for row in sample_rows(t, shape))


def groups(trajectories: Iterable[Trajectory]) -> list[Group]:
    """The trajectories sharing a ``group_id``, as groups (one without a ``group_id`` is a group of its own)."""
    by_id: dict[str, list[Trajectory]] = {}
    for t in trajectories:
        by_id.setdefault(t.group_id or f"\0{t.id}", []).append(t)
    return [
        Group(group_id=members[0].group_id or members[0].id, task_id=members[0].task_id, trajectories=tuple(members))
        for members in by_id.values()
    ]


# ---------------------------------------------------------------- raw


def raw_row(trajectory: Trajectory) -> dict[str, Any]:
    """One flat row per trajectory (see `row_schema.RAW`), the whole record in ``record`` as JSON text."""
    t, j, p = trajectory, trajectory.judgment, trajectory.policy
    data = serde.to_data(t)
    return {
        "id": t.id,
        "group_id": t.group_id,
        "env_uri": t.env_uri,
        "mode": t.mode.value,
        "task_id": t.task_id,
        "seed": t.seed,
        "sample": t.sample,
        "status": t.status.value,
        "score": None if j is None else j.score,
        "passed": None if j is None else j.passed,
        "judge": None if j is None else j.judge,
        "feedback": None if j is None else j.feedback,
        "components_json": None if j is None else _json(j.components),
        "policy_kind": p.kind,
        "policy_name": p.name,
        "provider": p.provider,
        "model": p.model,
        "revision": p.revision,
        "agent": t.agent,
        "error": t.error,
        "started": None if t.timing is None else t.timing.started,
        "duration_s": None if t.timing is None else t.timing.seconds,
        "token_faithful": t.token_faithful,
        "total_reward": float(sum(s.reward for s in t.steps)),
        # From the record's data, where arrays are already encoded: one form whatever the adapter kept.
        "steps": [_raw_step(s) for s in data["steps"]],
        "messages": [_message(m, _json) for m in t.messages],
        "model_calls": [_raw_model_call(c) for c in t.model_calls],
        "tool_calls": [
            {
                "id": c.id,
                "name": c.name,
                "arguments_json": _json(c.arguments),
                "result_json": _json(c.result),
                "error": c.error,
                "step": c.step,
            }
            for c in t.tool_calls
        ],
        "info_json": _json(data["info"]),
        "record": orjson.dumps(data).decode(),
    }


def _json(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


def _raw_step(step: dict[str, Any]) -> dict[str, Any]:
    return {
        "observation": value_cell(step.get("observation")),
        "action": value_cell(step.get("action")),
        "reward": float(step.get("reward", 0.0)),
        "terminated": bool(step.get("terminated", False)),
        "truncated": bool(step.get("truncated", False)),
        "text": step.get("text"),
        "info_json": _json(step.get("info", {})),
    }


_TYPES = {type(None): "null", bool: "bool", int: "int", float: "float", str: "str", list: "list", dict: "dict"}


def value_cell(value: Any) -> dict[str, Any]:
    """An observation or action (as its record holds it) as a `row_schema.VALUE`: its type kept.

    An encoded array keeps its dtype, shape and bytes when numpy is there to decode it (it is wherever
    an environment made one); without numpy, its record form as JSON text.
    """
    if arrays.is_encoded(value):
        if not _have_numpy():
            return {"type": "ndarray", "json": _json(value)}
        array = arrays.decode(value)
        little = array.astype(array.dtype.newbyteorder("<"), order="C", copy=False)
        return {"type": "ndarray", "dtype": array.dtype.name, "shape": list(array.shape), "data": little.tobytes()}
    return {"type": _TYPES.get(type(value), "json"), "json": _json(value)}


def _have_numpy() -> bool:
    if "numpy" in sys.modules:
        return True
    try:
        import numpy  # noqa: F401 - decoding an array needs it; a reader without it keeps the JSON form
    except ImportError:
        return False
    return True


def _raw_model_call(call: Any) -> dict[str, Any]:
    return {
        "id": call.id,
        "provider": call.provider,
        "model": call.model,
        "finish_reason": call.finish_reason,
        "prompt_token_ids": None if call.prompt_token_ids is None else list(call.prompt_token_ids),
        "completion_token_ids": None if call.completion_token_ids is None else list(call.completion_token_ids),
        "logprobs": None if call.logprobs is None else [float(x) for x in call.logprobs],
        "input_tokens": call.usage.get("prompt_tokens"),
        "output_tokens": call.usage.get("completion_tokens"),
        "duration_s": call.duration_s,
    }


# ---------------------------------------------------------------- messages


def _message(message: dict[str, Any], arguments: Any) -> dict[str, Any]:
    """A message with the keys of `row_schema.message_type` only; `arguments` shapes each tool call."""
    out: dict[str, Any] = {"role": str(message.get("role", "")), "content": _text(message.get("content"))}
    if message.get("tool_calls"):
        out["tool_calls"] = [arguments(_tool_call(c)) for c in message["tool_calls"]]
    for key in ("tool_call_id", "name"):
        if message.get(key) is not None:
            out[key] = str(message[key])
    return out


def _text(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI's content parts: their text, in order
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return _json(content)


def _tool_call(call: Any) -> Any:
    # TRL's chat templates want the arguments as an object; OpenAI's wire sends them as JSON text.
    if not isinstance(call, dict) or not isinstance(call.get("function"), dict):
        return call
    arguments = call["function"].get("arguments")
    if isinstance(arguments, str):
        try:
            parsed = orjson.loads(arguments)
        except orjson.JSONDecodeError:
            return call
        if isinstance(parsed, dict):
            return {**call, "function": {**call["function"], "arguments": parsed}}
    return call


def transcript(trajectory: Trajectory) -> list[dict[str, Any]]:
    """The chat the trajectory played, in TRL's message form (tool-call arguments as objects)."""
    # Step mode keeps the transcript it showed the model; rollout and task modes the last call's.
    if trajectory.messages:
        raw = list(trajectory.messages)
    elif trajectory.model_calls:
        last = trajectory.model_calls[-1]
        raw = [*last.messages, last.response]
    else:
        raw = []
    return [_message(m, lambda c: c) for m in raw]


# ---------------------------------------------------------------- sft


def _sft_wanted(trajectory: Trajectory, options: RowOptions) -> bool:
    if trajectory.status is not Status.OK or trajectory.judgment is None:
        return False
    return options.min_score is None or trajectory.judgment.score >= options.min_score


def _ids(trajectory: Trajectory) -> dict[str, Any]:
    return {
        "score": trajectory.score,
        "trajectory_id": trajectory.id,
        "group_id": trajectory.group_id,
        "task_id": trajectory.task_id,
    }


def sft_row(trajectory: Trajectory) -> dict[str, Any] | None:
    """``{"messages", "tools", ...}`` for an ``ok`` trajectory played through chat; None otherwise."""
    if trajectory.status is not Status.OK:
        return None
    messages = transcript(trajectory)
    if not any(m["role"] == "assistant" for m in messages):
        return None
    tools = list(trajectory.model_calls[-1].tools) if trajectory.model_calls else []
    return {"messages": messages, "tools": tools, **_ids(trajectory)}


def sft_tokens_row(trajectory: Trajectory) -> dict[str, Any] | None:
    """``{"input_ids", "assistant_masks", ...}`` from the exact recorded token ids; None where they are not exact.

    The sequence is the episode's calls laid end to end (`samples.merged_samples`): every later call's
    prompt must extend what came before, so each sampled token keeps its place and is masked 1. A
    trajectory with a call lacking token ids, whose prompts were re-rendered differently (a fork, or
    ``token_faithful`` False), makes no row rather than an approximate one.
    """
    if trajectory.status is not Status.OK or not trajectory.model_calls or trajectory.token_faithful is False:
        return None
    if samples.unrecorded(trajectory):
        return None
    made, forks = samples.merged_samples(trajectory)
    if forks.count or len(made) != 1:
        return None
    sample = made[0]
    return {
        "input_ids": [*sample.prompt_ids, *sample.completion_ids],
        "assistant_masks": [0] * len(sample.prompt_ids) + list(sample.loss_mask),
        **_ids(trajectory),
    }


# ---------------------------------------------------------------- token samples


def sample_row(sample: samples.TokenSample) -> dict[str, Any]:
    """A `samples.TokenSample` as a row of the ``merged`` or ``steps`` shape."""
    return {
        "prompt_ids": list(sample.prompt_ids),
        "completion_ids": list(sample.completion_ids),
        "logprobs": None if sample.logprobs is None else list(sample.logprobs),
        "loss_mask": list(sample.loss_mask),
        "reward": sample.reward,
        "trainable": sample.trainable,
        "calls": list(sample.calls),
        "trajectory_id": sample.trajectory_id,
        "group_id": sample.group_id,
        "task_id": sample.task_id,
    }


def sample_rows(trajectory: Trajectory, shape: str) -> list[dict[str, Any]]:
    """The ``merged`` (forked where a prompt does not extend the sequence) or ``steps`` rows of `trajectory`."""
    made = samples.merged_samples(trajectory)[0] if shape == "merged" else samples.step_samples(trajectory)
    return [sample_row(sample) for sample in made]


# ---------------------------------------------------------------- dpo


def dpo_row(group: Group) -> dict[str, Any] | None:
    """``prompt``/``chosen``/``rejected`` from the best and worst judged trajectory of a group.

    None when fewer than two members are judged and trainable, when best and worst tie (no
    preference), or when the two did not answer the same prompt.
    """
    judged = [t for t in group.trajectories if t.judgment is not None and t.status.trainable]
    if len(judged) < 2:
        return None
    ranked = sorted(judged, key=lambda t: t.judgment.score)  # type: ignore[union-attr]
    worst, best = ranked[0], ranked[-1]
    if best.score == worst.score:
        return None
    chosen, rejected = transcript(best), transcript(worst)
    cut = _first_assistant(chosen)
    if cut is None or _first_assistant(rejected) != cut or chosen[:cut] != rejected[:cut]:
        return None
    return {
        "prompt": chosen[:cut],
        "chosen": chosen[cut:],
        "rejected": rejected[cut:],
        "score_chosen": best.score,
        "score_rejected": worst.score,
        "chosen_id": best.id,
        "rejected_id": worst.id,
        "group_id": group.group_id,
        "task_id": group.task_id,
    }


def _first_assistant(messages: Sequence[dict[str, Any]]) -> int | None:
    return next((i for i, m in enumerate(messages) if m.get("role") == "assistant"), None)
