"""The ``ray`` backend of Nenyax: episodes played by Ray actors, on this machine or a cluster.

``env.rollouts(policy, tasks, backend="ray")`` selects it by name (its ``nenyax.executors`` entry point); an object,
``RayExecutor(workers=8, address="auto")``, picks the cluster. Importing this package does not import
Ray: `RayExecutor` loads it on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nenyax.ray._version import __version__

if TYPE_CHECKING:
    from nenyax.ray.executor import RayExecutor

__all__ = ["RayExecutor", "__version__"]


def __getattr__(name: str) -> Any:
    if name == "RayExecutor":
        from nenyax.ray.executor import RayExecutor

        return RayExecutor
    raise AttributeError(f"module 'nenyax.ray' has no attribute {name!r}")
