"""Registering the text env with skyrl-gym, which has no plugin entry points: importing
`nenyax.trainers.skyrl` registers it, in whichever process imports it (SkyRL's generator runs in its
``skyrl_entrypoint`` Ray task: import the package there, or call `register`)."""

from __future__ import annotations

import skyrl_gym
from skyrl_gym.envs.registration import registry

from nenyax.trainers.skyrl.text_env import ENV_ID

ENTRY_POINT = "nenyax.trainers.skyrl.text_env:NenyaxTextEnv"


def register() -> None:
    """Register `NenyaxTextEnv` as ``nenyax`` (once: skyrl-gym refuses a second registration of a name)."""
    if ENV_ID not in registry:
        skyrl_gym.register(id=ENV_ID, entry_point=ENTRY_POINT)
