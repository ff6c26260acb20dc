"""`HarborEnvironment`: harbor tasks as a Nenyax task environment, each episode one harbor `Trial`.

Harbor's own trial runs harbor's own agents and verifier; only the commands go elsewhere, to the
Nenyax sandbox plugin chosen at load (bwrap by default) through `NenyaxSandboxEnvironment`. The
built-in policies are harbor's agents (``reference`` -> ``oracle``, ``null`` -> ``nop``); any other
policy is ``terminus-2`` pointed at the episode's recording-proxy URL, so every model call it makes is
in the trajectory.
"""

from __future__ import annotations

import inspect
import os
import shutil
import tempfile
import uuid
from importlib import metadata
from pathlib import Path
from typing import Any

from nenyax.adapters.harbor.backend import HANDOFFS, replay_problem
from nenyax.adapters.harbor.judgment import judge
from nenyax.adapters.harbor.options import HarborSpec
from nenyax.adapters.harbor.tasks import HarborTask
from nenyax.core import (
    BadURIError,
    Capabilities,
    Manifest,
    Mode,
    NativeEpisode,
    NativeResult,
    Registry,
    Sandbox,
    Split,
    TaskEnvironment,
    UnsupportedPolicyError,
    UsageError,
)
from nenyax.core.errors import InfraFailure, NenyaxError
from nenyax.core.toolkit.failures import describe
from nenyax.core.toolkit.plugins import option_problem
from nenyax.core.toolkit.tasks import one_split_ids, pick

# litellm (terminus-2's client) otherwise fetches its model price list from GitHub when imported: three
# retries against a network a sandboxed run may not have, before it falls back to its own copy.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

BACKEND = "nenyax.adapters.harbor.backend:NenyaxSandboxEnvironment"
"""The import path harbor loads the sandbox backend from."""

MODEL_AGENT = "nenyax.adapters.harbor.agent:ProxiedTerminus2"
"""harbor's terminus-2, asking the proxy once per attempt (`nenyax.adapters.harbor.agent`)."""

AGENTS = {"reference": "oracle", "null": "nop", "model": "terminus-2"}
"""Which harbor agent plays each kind of Nenyax policy."""


def _harbor_version() -> str:
    try:
        return metadata.version("harbor")
    except metadata.PackageNotFoundError:
        return "unknown"


def _replay_problem(task: HarborTask, sandbox: str) -> str | None:
    """Why a sandbox that builds no images cannot set `task` up: its environment's Dockerfile, or the one
    its separate verifier is made from (``tests/`` when it holds a Dockerfile, as harbor 0.26 picks it)."""
    if not task.config.environment.docker_image:
        problem = replay_problem(task.path / "environment", sandbox)
        if problem:
            return problem
    verifier = task.config.verifier
    mode = getattr(verifier, "environment_mode", None)
    separate = getattr(mode, "value", mode) == "separate" or getattr(verifier, "environment", None) is not None
    if separate and (task.path / "tests" / "Dockerfile").is_file():
        return replay_problem(task.path / "tests", sandbox)
    return None


class HarborEnvironment(TaskEnvironment):
    """One harbor task folder, or a dataset of them (see the module docstring)."""

    def __init__(self, spec: HarborSpec, tasks: list[HarborTask], registry: Registry) -> None:
        self.spec = spec
        self.tasks = {task.id: task for task in tasks}
        self._registry = registry
        self._check_sandbox()
        self._backend: Sandbox | None = None
        self._handoff = f"nenyax-{uuid.uuid4().hex}"
        self._refuse_unplayable(tasks)
        solvable = all(task.has_solution for task in tasks)
        target = Path(spec.target).expanduser()
        extra: dict[str, Any] = {
            "sandbox": spec.sandbox,
            "agents": AGENTS,
            "tasks": {task.id: {"name": task.name, "sha256": task.digest} for task in tasks},
        }
        if not solvable:
            extra["no_reference"] = "Some tasks have no solution/solve.sh, so the oracle agent cannot run them."
        super().__init__(
            Manifest(
                uri=spec.uri,
                format="harbor",
                format_version=_harbor_version(),
                mode=Mode.TASK,
                name=target.resolve().name or str(target),
                description=tasks[0].description if len(tasks) == 1 else f"{len(tasks)} harbor tasks in {target}",
                splits=(Split(name="tasks", count=len(tasks)),),
                observation="instruction.md, and a terminal in the task's sandbox",
                action="shell commands (terminus-2 drives a tmux session in the sandbox)",
                score_range=None,  # reward.json may hold any finite number
                extra=extra,
                capabilities=Capabilities(
                    stable_task_ids=True,
                    reference_policy=solvable,
                    null_policy=True,
                    random_policy=False,  # harbor has no agent that acts at random
                    multi_turn=True,
                    concurrent_sessions=True,
                    max_turns=spec.max_turns,
                ),
            )
        )

    def _check_sandbox(self) -> None:
        """An unknown sandbox or option fails at load, in one sentence; a sandbox that cannot start here
        fails each episode as ``infra_error`` instead (it may be a passing condition of this machine)."""
        factory = self._registry.factory("sandbox", self.spec.sandbox)
        problem = option_problem(factory, self.spec.sandbox_options)
        if problem:
            raise BadURIError(f"The sandbox {self.spec.sandbox!r} {problem}")

    def _refuse_unplayable(self, tasks: list[HarborTask]) -> None:
        """When the sandbox builds no images and no task's Dockerfile can be replayed in it, refuse at load
        in one sentence (the first line `check` and `try` print) instead of failing every episode."""
        if self.spec.image is not None:
            return
        try:
            backend = self._sandbox()
        except InfraFailure:  # a sandbox that cannot start here is each episode's infra_error
            return
        if backend.capabilities.image_build:
            return
        problems = [_replay_problem(task, self.spec.sandbox) for task in tasks]
        if all(problems):
            more = f" (and the {len(tasks) - 1} other tasks cannot be set up either)" if len(tasks) > 1 else ""
            self.close()
            raise UsageError(str(problems[0]).rstrip(".") + more + ".")

    def task_ids(self, split: str | None = None, limit: int | None = None) -> list[str]:
        """The task folders' names, sorted."""
        return one_split_ids(self.uri, self.tasks, split, limit)

    def _task(self, task_id: str | None) -> HarborTask:
        return self.tasks[pick(self.uri, task_id, self.tasks)]

    def _sandbox(self) -> Sandbox:
        """The sandbox backend every trial of this environment shares, made on first use."""
        if self._backend is None:
            try:
                self._backend = self._registry.create("sandbox", self.spec.sandbox, **self._sandbox_options())
            except NenyaxError as exc:
                raise InfraFailure(f"The {self.spec.sandbox} sandbox cannot run here: {describe(exc)}") from exc
            HANDOFFS[self._handoff] = self._backend
        return self._backend

    def _sandbox_options(self) -> dict[str, Any]:
        """The sandbox's options as given; and where it builds images and takes a ``build_network`` (the
        docker sandbox) not given, ``host``: harbor's own runner builds a task's image with the network, as
        ``docker build`` does, so a Dockerfile's ``RUN apt-get install`` works; only the agent's run is cut
        off (the task's ``allow_internet``)."""
        options = dict(self.spec.sandbox_options)
        factory = self._registry.factory("sandbox", self.spec.sandbox)
        try:
            takes = "build_network" in inspect.signature(factory).parameters
        except (TypeError, ValueError):  # a factory without a signature to read: its options as given
            takes = False
        if takes and "build_network" not in options:
            options["build_network"] = "host"
        return options

    def _agent(self, episode: NativeEpisode, task: HarborTask) -> Any:
        from harbor.models.trial.config import AgentConfig

        if episode.agent not in AGENTS:
            raise UnsupportedPolicyError(f"harbor has no agent for the {episode.agent} policy.")
        if episode.agent == "reference" and not task.has_solution:
            raise UnsupportedPolicyError(f"The harbor task {task.id} has no solution/solve.sh for the oracle agent.")
        timeout = {"override_timeout_sec": self.spec.agent_timeout} if self.spec.agent_timeout else {}
        if episode.agent != "model":
            return AgentConfig(name=AGENTS[episode.agent], **timeout)
        # Here rather than in harbor's agent factory: terminus-2 installed but broken (a dependency another
        # package pinned too old) is then this sentence, not an error deep in harbor's trial.
        import nenyax.adapters.harbor.agent  # noqa: F401

        kwargs: dict[str, Any] = {
            "api_base": episode.base_url,
            "llm_kwargs": {"api_key": episode.api_key},
            # No retries by the client either (the OpenAI SDK's own, under litellm): see `agent`.
            "llm_call_kwargs": {"max_retries": 0},
            # asciinema is pip-installed into the sandbox for the recording: a network most sandboxes lack.
            "record_terminal_session": False,
        }
        if self.spec.max_turns is not None:
            kwargs["max_turns"] = self.spec.max_turns
        # litellm's "openai/" prefix: an OpenAI-compatible server (the proxy), whatever the model is called.
        return AgentConfig(import_path=MODEL_AGENT, model_name=f"openai/{episode.model}", kwargs=kwargs, **timeout)

    async def run(self, episode: NativeEpisode) -> NativeResult:
        """One harbor trial of the task with the policy's agent, in a fresh sandbox, judged by its verifier."""
        from harbor.models.trial.config import EnvironmentConfig, TaskConfig, TrialConfig
        from harbor.trial.trial import Trial

        task = self._task(episode.task_id)
        agent = self._agent(episode, task)
        self._sandbox()
        model = episode.agent == "model"
        options = {
            "sandbox": self.spec.sandbox,
            "sandbox_options": self.spec.sandbox_options,
            "handoff": self._handoff,
            "image": self.spec.image,
            # Only the model agent needs a network: the proxy, and nothing else.
            "network": "proxy" if model else "none",
            "proxy": episode.base_url if model else None,
        }
        keep = self.spec.trials_dir is not None
        trials = self.spec.trials_dir if keep else Path(tempfile.mkdtemp(prefix="nenyax-harbor-"))
        assert trials is not None
        trials.mkdir(parents=True, exist_ok=True)
        try:
            config = TrialConfig(
                task=TaskConfig(path=task.path),
                trials_dir=trials,
                agent=agent,
                environment=EnvironmentConfig(import_path=BACKEND, kwargs=options),
            )
            trial = await Trial.create(config)
            result = await trial.run()
            trial_dir = trials / result.trial_name
            done = judge(result, trial_dir, AGENTS[episode.agent])
            if keep:
                done.info["trial_dir"] = str(trial_dir)
            return done
        finally:
            if not keep:
                shutil.rmtree(trials, ignore_errors=True)

    def close(self) -> None:
        """Forget the shared sandbox backend (every trial already stopped its own sandbox)."""
        HANDOFFS.pop(self._handoff, None)
        self._backend = None
