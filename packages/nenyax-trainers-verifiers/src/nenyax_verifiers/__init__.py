"""The verifiers taskset id of Nenyax: ``--env.taskset.id nenyax-verifiers`` (verifiers imports a taskset id as
one top-level module, ``nenyax_verifiers``, and pairs the `Taskset`, `Env` and `Harness` its `__all__` exports)."""

from nenyax.trainers.verifiers import (
    NenyaxConfig,
    NenyaxData,
    NenyaxEnv,
    NenyaxEnvConfig,
    NenyaxHarness,
    NenyaxTask,
    NenyaxTaskset,
)

__all__ = [
    "NenyaxConfig",
    "NenyaxData",
    "NenyaxEnv",
    "NenyaxEnvConfig",
    "NenyaxHarness",
    "NenyaxTask",
    "NenyaxTaskset",
]
