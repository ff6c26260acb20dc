"""Row shapes made from trajectories, once for every exporter: raw, SFT and DPO.

Exporters are writers; what goes in a row is decided here, so every destination gets the same rows.
Shapes follow TRL's conversational dataset formats (``messages``; ``prompt``/``chosen``/``rejected``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from nenyax.core.contract import serde
from nenyax.core.contract.trajectory import Group, Status, Trajectory

SHAPES = ("raw", "sft", "dpo")
"""The row shapes every exporter accepts."""


def raw_row(trajectory: Trajectory) -> dict[str, Any]:
    """The whole trajectory as one nested row."""
    return serde.to_data(trajectory)  # type: ignore[no-any-return]


def _transcript(trajectory: Trajectory) -> list[dict[str, Any]]:
    # Step mode keeps the transcript it showed the model; rollout and task modes the last call's.
    if trajectory.messages:
        return [dict(m) for m in trajectory.messages]
    if trajectory.model_calls:
        last = trajectory.model_calls[-1]
        return [*(dict(m) for m in last.messages), dict(last.response)]
    return []


def sft_row(trajectory: Trajectory) -> dict[str, Any] | None:
    """``{"messages": [...], "tools": [...]}`` for an ``ok`` trajectory played through chat; None otherwise."""
    if trajectory.status is not Status.OK:
        return None
    messages = _transcript(trajectory)
    if not any(m.get("role") == "assistant" for m in messages):
        return None
    tools = list(trajectory.model_calls[-1].tools) if trajectory.model_calls else []
    return {"messages": messages, "tools": tools, "score": trajectory.score, "trajectory_id": trajectory.id}


def dpo_row(group: Group) -> dict[str, Any] | None:
    """``prompt``/``chosen``/``rejected`` from the best and worst judged trajectory of a group.

    None when fewer than two members are judged and trainable, or when best and worst tie (no preference).
    """
    judged = [t for t in group.trajectories if t.judgment is not None and t.status.trainable]
    if len(judged) < 2:
        return None
    ranked = sorted(judged, key=lambda t: t.judgment.score)  # type: ignore[union-attr]
    worst, best = ranked[0], ranked[-1]
    if best.score == worst.score:
        return None
    chosen, rejected = _transcript(best), _transcript(worst)
    cut = _first_assistant(chosen)
    if cut is None or _first_assistant(rejected) != cut or chosen[:cut] != rejected[:cut]:
        return None  # no shared prompt: the two did not answer the same thing
    return {
        "prompt": chosen[:cut],
        "chosen": chosen[cut:],
        "rejected": rejected[cut:],
        "score_chosen": best.score,
        "score_rejected": worst.score,
        "group_id": group.group_id,
    }


def _first_assistant(messages: list[dict[str, Any]]) -> int | None:
    return next((i for i, m in enumerate(messages) if m.get("role") == "assistant"), None)


def rows(trajectories: Iterable[Trajectory], shape: str, groups: Iterable[Group] = ()) -> Iterator[dict[str, Any]]:
    """The rows of `shape` for `trajectories` (``raw``, ``sft``) or `groups` (``dpo``)."""
    if shape == "raw":
        yield from (raw_row(t) for t in trajectories)
    elif shape == "sft":
        yield from (row for t in trajectories if (row := sft_row(t)) is not None)
    elif shape == "dpo":
        yield from (row for g in groups if (row := dpo_row(g)) is not None)
    else:
        msg = f"Unknown row shape {shape!r}; use one of {', '.join(SHAPES)}."
        raise ValueError(msg)
