"""One environment being served, and what the server learned about it from a probe session.

It decides the wire shape of actions (text or native, see `schemas`), builds the JSON schemas, and
runs the environment's synchronous calls: inline on the event loop while they are fast, in one
worker thread once they prove slow (so a slow environment cannot stall every other session).
"""

from __future__ import annotations

import asyncio
import collections
import re
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from nenyax.core import Session, StepEnvironment, UsageError
from nenyax.server.openenv import schemas

DEFAULT_MAX_TURNS = 1000
"""Safety bound for environments that declare no ``max_turns`` (the same as Nenyax's own loop)."""
SLOW_CALL_S = 0.01
"""A synchronous environment call slower than this blocks every other session on the event loop..."""
SLOW_CALLS_TO_OFFLOAD = 3
"""...so when this many of them fall within `SLOW_WINDOW` consecutive calls, the environment's calls move
to a worker thread (one, so calls never overlap)."""
SLOW_WINDOW = 100
"""On a busy machine any call can look slow when the process is preempted in the middle of it, but
that happens at most once a time slice (measured: three strikes in all moved fast envs to the thread);
only an environment that is itself slow makes several of a few consecutive calls slow."""

clock = time.perf_counter


def _overrides(obj: Any, name: str, base: type) -> bool:
    return getattr(type(obj), name) is not getattr(base, name)


class ServedEnvironment:
    """A step-mode environment with what the server learned about it from one probe session."""

    def __init__(self, env: StepEnvironment, probe: Session, *, reference: bool = False) -> None:
        """Use `ServedEnvironment.create`, which opens the probe session."""
        self.env = env
        # The oracle's action in each state (`reference`), for checking the server back: off by default,
        # since any client may read the state, and an evaluation server must not hand out its answers.
        self.reference = reference and env.manifest.capabilities.reference_policy
        manifest = env.manifest
        self.manifest = manifest
        self.parses_text = _overrides(probe, "parse_action", Session)
        self.kind = schemas.TEXT if not self.parses_text and isinstance(probe.observation, str) else schemas.NATIVE
        self.native = self.kind == schemas.NATIVE
        self.field = "action" if self.native else "message"
        allowed = {"metadata", self.field} | ({"message"} if self.parses_text else set())
        self.action_keys = frozenset(allowed)
        self.renders = _overrides(probe, "render", Session)
        self.async_act = _overrides(probe, "aact", Session)
        self.sync_session = type(env).asession is StepEnvironment.asession
        self.max_turns = manifest.capabilities.max_turns or DEFAULT_MAX_TURNS
        self.name = re.sub(r"[^A-Za-z0-9_.-]+", "_", manifest.name) or manifest.format
        self.offload = False
        self.calls = 0  # inline calls so far, to tell a slow environment from a preempted process
        self._slow_calls: collections.deque[int] = collections.deque(maxlen=SLOW_CALLS_TO_OFFLOAD)
        self._pool: ThreadPoolExecutor | None = None
        title = re.sub(r"[^A-Za-z0-9]", "", manifest.name.title()) or "Nenyax"
        native = schemas.space_schema(getattr(env, "action_space", None)) if self.kind == schemas.NATIVE else {}
        self.schema = {
            "action": schemas.action_schema(self.kind, self.parses_text, native, manifest.action, title),
            "observation": schemas.observation_schema(manifest.observation, title),
            "state": schemas.state_schema(title),
        }
        self.schema["reset_observation"] = self.schema["observation"]

    @classmethod
    async def create(cls, env: StepEnvironment, *, reference: bool = False) -> ServedEnvironment:
        """Probe `env` with one session of its first task (closed again) and wrap it; `reference` shares the oracle."""
        if not isinstance(env, StepEnvironment):
            mode = getattr(getattr(env, "manifest", None), "mode", None)
            msg = (
                f"{env.uri} is a {getattr(mode, 'value', 'non-step')}-mode environment; "
                "nenyax serve serves step-mode environments only."
            )
            raise UsageError(msg)
        probe = await env.asession()
        try:
            return cls(env, probe, reference=reference)
        finally:
            await probe.aclose()

    def metadata(self) -> dict[str, Any]:
        """``/metadata``: OpenEnv's EnvironmentMetadata fields."""
        manifest = self.manifest
        description = manifest.description or f"{manifest.name} ({manifest.format}), served by Nenyax."
        metadata: dict[str, Any] = {
            "name": manifest.name,
            "description": description,
            "readme_content": None,
            "version": manifest.format_version,
            "author": None,
            "documentation_url": None,
        }
        if manifest.capabilities.stochastic:
            # Beyond OpenEnv's fields: a fixed seed does not fix the outcome (slippery dynamics), so even an optimal
            # policy fails some tasks; nenyax-adapters-openenv reads it to audit the reference fairly.
            metadata["stochastic"] = True
        return metadata

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Call a synchronous environment method inline, or in the worker thread once it proved slow."""
        if self.offload:
            return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)
        self.calls += 1
        started = clock()
        out = fn(*args)
        if clock() - started > SLOW_CALL_S:
            self.slow_call()
        return out

    def slow_call(self) -> None:
        """Note a slow inline call; enough of them close together switch the environment to the worker thread."""
        window = self._slow_calls
        window.append(self.calls)
        if len(window) == SLOW_CALLS_TO_OFFLOAD and self.calls - window[0] < SLOW_WINDOW and not self.offload:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="nenyax-env")
            self.offload = True

    def close(self) -> None:
        """Stop the worker thread and close the environment."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
        self.env.close()
