"""Any Nenyax environment inside tinker-cookbook's RL loop.

- `NenyaxEnvGroupBuilder`: G episodes of one task and seed of a step environment, played by the cookbook's own
  rollout code (`do_group_rollout`) through its `MessageEnv` / `EnvFromMessageEnv` and a renderer;
- `NenyaxRLDataset` / `NenyaxRLDatasetBuilder`: batches of those builders over the environment's tasks;
- `nenyax_group_rollout`: a group of any mode played by Nenyax's own loop, sampled on a tinker `SamplingClient`,
  returned as the cookbook's `TrajectoryGroup`.
"""

from nenyax.trainers.tinker._version import __version__
from nenyax.trainers.tinker.builder import NenyaxEnvGroupBuilder
from nenyax.trainers.tinker.dataset import NenyaxRLDataset, NenyaxRLDatasetBuilder
from nenyax.trainers.tinker.envs import EpisodeFailed, NenyaxEnv, NenyaxMessageEnv
from nenyax.trainers.tinker.rollout import SamplerPolicy, nenyax_group_rollout

__all__ = [
    "EpisodeFailed",
    "NenyaxEnv",
    "NenyaxEnvGroupBuilder",
    "NenyaxMessageEnv",
    "NenyaxRLDataset",
    "NenyaxRLDatasetBuilder",
    "SamplerPolicy",
    "__version__",
    "nenyax_group_rollout",
]
