"""What two episodes are compared on when a check asks whether they are the same episode."""

from __future__ import annotations

import hashlib

from nenyax.core.contract import serde
from nenyax.core.contract.manifest import Mode
from nenyax.core.contract.trajectory import Trajectory


def first_view(traj: Trajectory) -> bytes:
    """What the policy was first shown: the first step's observation, or the native loop's first request."""
    if traj.mode is Mode.STEP:
        return serde.canonical_json([step.observation for step in traj.steps[:1]])
    return serde.canonical_json([list(call.messages) for call in traj.model_calls[:1]])


def replay_view(traj: Trajectory) -> bytes:
    """The whole episode as one canonical JSON document: the steps, and every request a native loop made.

    Through serde's Step hook (plain JSON passes straight to orjson), not cattrs walking every number
    of every observation.
    """
    if traj.mode is Mode.STEP:
        return serde.canonical_json(traj.steps)
    return serde.canonical_json([traj.steps, [list(call.messages) for call in traj.model_calls]])


def fingerprint(view: bytes) -> str:
    """A short, stable name for a view, for evidence sentences."""
    return "sha256:" + hashlib.sha256(view).hexdigest()[:16]


def preview(traj: Trajectory, width: int = 80) -> str:
    """The first observation as a short string, for evidence sentences."""
    text = first_view(traj).decode(errors="replace")
    return text if len(text) <= width else text[: width - 3] + "..."
