"""Any Nenyax environment inside verl's agent loop: `NenyaxAgentLoop` (agent name ``nenyax``) and `verl_rows`.

`NenyaxAgentLoop` imports verl (and with it ray and torch): it is loaded when first named, so making rows
(`verl_rows`) does not pay for it.
"""

from pathlib import Path
from typing import Any

from nenyax.trainers.verl._version import __version__
from nenyax.trainers.verl.rows import AGENT_NAME, verl_rows

AGENT_LOOP_CONFIG = Path(__file__).with_name("agent_loop_config.yaml")
"""For ``actor_rollout_ref.rollout.agent.agent_loop_config_path``: registers ``nenyax`` in verl's workers."""

__all__ = ["AGENT_LOOP_CONFIG", "AGENT_NAME", "NenyaxAgentLoop", "VerlServerProvider", "__version__", "verl_rows"]


def __getattr__(name: str) -> Any:
    if name == "NenyaxAgentLoop":
        from nenyax.trainers.verl.agent_loop import NenyaxAgentLoop

        return NenyaxAgentLoop
    if name == "VerlServerProvider":
        from nenyax.trainers.verl.provider import VerlServerProvider

        return VerlServerProvider
    raise AttributeError(name)
