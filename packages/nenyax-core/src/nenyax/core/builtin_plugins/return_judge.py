"""Core's own judge: the episode's return, for any step environment whose rewards are the signal."""

from __future__ import annotations

from typing import Any

from nenyax.core.contract.trajectory import Judgment, Trajectory
from nenyax.core.plugins.judge import JudgeCapabilities


class ReturnJudge:
    """A trajectory judge: the undiscounted sum of step rewards.

    `reference` may be a mapping with ``reward_threshold`` (passed when the return reaches it; unknown
    without one) and ``name`` (the judged environment, for the record).
    """

    capabilities = JudgeCapabilities(trajectory=True)

    def judge_trajectory(self, trajectory: Trajectory, reference: Any) -> Judgment:
        """Score the return; components hold the return and the episode's length."""
        steps = trajectory.steps
        episode_return = float(sum(step.reward for step in steps))
        settings = reference if isinstance(reference, dict) else {}
        threshold = settings.get("reward_threshold")
        last = steps[-1] if steps else None
        ended = "terminated" if last and last.terminated else "truncated" if last and last.truncated else "cut"
        return Judgment(
            score=episode_return,
            passed=None if threshold is None else episode_return >= threshold,
            components={"return": episode_return, "length": float(len(steps))},
            feedback=f"{ended} after {len(steps)} step(s) with return {episode_return:g}",
            judge=f"return:{settings['name']}" if "name" in settings else "return",
        )
