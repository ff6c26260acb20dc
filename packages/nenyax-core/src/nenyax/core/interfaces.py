"""What each plugin kind's factory returns: one interface per kind (see `hookspecs`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from nenyax.core.chat import ChatRequest
from nenyax.core.environment import Environment
from nenyax.core.trajectory import Group, Judgment, ModelCall, Trajectory
from nenyax.core.uri import EnvURI


@runtime_checkable
class Adapter(Protocol):
    """Loads URIs of one format into environments."""

    def load(self, uri: EnvURI) -> Environment:
        """Return the environment `uri` names; raise `BadURIError` (one sentence) when it names none."""
        ...

    def examples(self) -> Sequence[str]:
        """A few URIs of this format that load offline, for conformance checks and help text."""
        ...


@runtime_checkable
class Provider(Protocol):
    """The transport behind an Endpoint; built by the plugin's factory from keyword options."""

    async def complete(self, request: ChatRequest) -> ModelCall:
        """Send one chat request; return the recorded call (token ids and logprobs when known).

        Raise `InfraFailure` (one sentence) when the transport or server fails after retries, or
        the server's response is malformed: the episode then ends ``infra_error``, never scored.
        Must work from any event loop; keep one connection pool per loop, not one per call.
        """
        ...

    async def aclose(self) -> None:
        """Release connections and models held for the current event loop."""
        ...


@runtime_checkable
class Judge(Protocol):
    """Turns an answer into a `Judgment`."""

    def judge(self, answer: str, reference: Any) -> Judgment:
        """Judge `answer` against `reference`; raise `VerifierFailure` when it cannot decide."""
        ...


@runtime_checkable
class Sandbox(Protocol):
    """Runs commands in isolation."""

    async def start(self, spec: dict[str, Any]) -> None:
        """Build or start the isolated environment described by `spec`."""
        ...

    async def exec(self, command: str, *, timeout: float) -> tuple[int, str, str]:
        """Run `command`; return exit code, stdout and stderr."""
        ...

    async def put(self, local: Path, remote: str) -> None:
        """Copy a file in."""
        ...

    async def get(self, remote: str, local: Path) -> None:
        """Copy a file out."""
        ...

    async def stop(self) -> None:
        """Tear everything down."""
        ...


@runtime_checkable
class Learner(Protocol):
    """Improves a policy from groups of trajectories."""

    def policy(self) -> Any:
        """The current policy."""
        ...

    def update(self, groups: Sequence[Group]) -> dict[str, float]:
        """Learn from `groups`; return metrics."""
        ...

    def save(self, path: Path) -> None:
        """Snapshot the learner's state."""
        ...

    def restore(self, path: Path) -> None:
        """Restore a snapshot taken by `save`."""
        ...


@runtime_checkable
class Exporter(Protocol):
    """Writes trajectories in some row shape."""

    def export(self, trajectories: Sequence[Trajectory], dest: Path, shape: str) -> Path:
        """Write `trajectories` as `shape` rows (raw, sft, dpo) under `dest`; return what was written."""
        ...


@runtime_checkable
class Tracer(Protocol):
    """Configures OpenTelemetry export of GenAI spans."""

    def configure(self, settings: dict[str, Any]) -> None:
        """Install span exporters for this backend."""
        ...


INTERFACES: dict[str, type] = {
    "adapter": Adapter,
    "provider": Provider,
    "judge": Judge,
    "sandbox": Sandbox,
    "learner": Learner,
    "exporter": Exporter,
    "tracer": Tracer,
}
"""Interface of each plugin kind."""
