"""Any Nenyax environment as a verifiers v1 taskset: ``--env.taskset.id nenyax-verifiers``.

verifiers pairs a taskset module with the `Taskset`, `Env` and `Harness` its `__all__` exports: the
tasks (`NenyaxTaskset`), the env that plays a step session as the seat's user (`NenyaxEnv`) and the
harness that plays a rollout or task environment's episode in-process (`NenyaxHarness`).
"""

from nenyax.trainers.verifiers._version import __version__
from nenyax.trainers.verifiers.env import NenyaxEnv, NenyaxEnvConfig
from nenyax.trainers.verifiers.harness import NenyaxHarness, NenyaxHarnessConfig
from nenyax.trainers.verifiers.outcome import NenyaxEpisodeFailed
from nenyax.trainers.verifiers.taskset import NenyaxConfig, NenyaxData, NenyaxTask, NenyaxTaskset, task_config

__all__ = [
    "NenyaxConfig",
    "NenyaxData",
    "NenyaxEnv",
    "NenyaxEnvConfig",
    "NenyaxEpisodeFailed",
    "NenyaxHarness",
    "NenyaxHarnessConfig",
    "NenyaxTask",
    "NenyaxTaskset",
    "__version__",
    "task_config",
]
