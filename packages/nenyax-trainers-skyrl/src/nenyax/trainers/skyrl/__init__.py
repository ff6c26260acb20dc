"""Any Nenyax environment inside SkyRL: the ``nenyax`` text env of skyrl-gym (step mode, SkyRL's own generator
samples) and `NenyaxGenerator` (any mode: Nenyax plays each episode against SkyRL's inference endpoint and hands
back the recorded token ids). Importing the package registers the text env with skyrl-gym."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nenyax.trainers.skyrl._version import __version__
from nenyax.trainers.skyrl.registration import register
from nenyax.trainers.skyrl.rows import skyrl_rows
from nenyax.trainers.skyrl.text_env import ENV_ID, EpisodeFailed, NenyaxTextEnv

if TYPE_CHECKING:
    from nenyax.trainers.skyrl.generator import NenyaxGenerator

__all__ = ["ENV_ID", "EpisodeFailed", "NenyaxGenerator", "NenyaxTextEnv", "__version__", "register", "skyrl_rows"]

register()


def __getattr__(name: str) -> Any:
    # The generator needs skyrl itself (torch and more); the text env only skyrl-gym.
    if name == "NenyaxGenerator":
        from nenyax.trainers.skyrl.generator import NenyaxGenerator

        return NenyaxGenerator
    msg = f"module 'nenyax.trainers.skyrl' has no attribute {name!r}"
    raise AttributeError(msg)
