"""`NenyaxSandboxEnvironment`: a harbor environment backend whose every call goes to a Nenyax sandbox plugin.

Harbor loads it itself (``EnvironmentConfig(import_path="nenyax.adapters.harbor.backend:NenyaxSandboxEnvironment")``,
or ``harbor run -e ...``), so harbor's trial, agents and verifier run unchanged while the commands run
in whichever sandbox Nenyax was told to use (bwrap by default). Its options are plain data, because
harbor writes them into the trial's ``config.json``; the live backend object of a Nenyax episode is
found by the ``handoff`` key the adapter registered it under (`HANDOFFS`), else one is made by name.

A sandbox that builds no images (bwrap) runs the sandbox's default image, and the Dockerfile's set-up
is replayed in it (`nenyax.adapters.harbor.dockerfile`: its COPY, RUN, ENV and WORKDIR, in order); a
Dockerfile that cannot be replayed stops the start in one sentence, an infrastructure failure. That
is how harbor's separate verifier gets its tests (``tests/Dockerfile``: ``COPY . /tests/``). What
happened (the image digest, whether the Dockerfile was built or replayed, the limits not held) is
written to `FACTS_FILE` in the trial folder, for the trajectory's info.
"""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path
from typing import Any

try:
    from harbor.environments.base import BaseEnvironment, ExecResult
    from harbor.environments.capabilities import EnvironmentCapabilities
except ImportError as exc:  # harbor absent (Python 3.11): the module imports, the adapter refuses to load
    from nenyax.adapters.harbor._missing import absent_or_raise

    absent_or_raise(exc, "harbor's environment base classes (harbor.environments)")
    from nenyax.adapters.harbor._missing import BaseEnvironment, EnvironmentCapabilities, ExecResult

from nenyax.adapters.harbor.dockerfile import Copy, Plan, plan
from nenyax.core import Sandbox, SandboxHandle, SandboxSpec, create_sandbox
from nenyax.core.errors import InfraFailure

FACTS_FILE = "nenyax-sandbox.json"
"""What the backend did, in the trial folder: read back by the adapter into the trajectory's info."""

HARBOR_DIRS = ("/logs/agent", "/logs/verifier", "/logs/artifacts", "/tests", "/solution", "/installed-agent")
"""Where harbor puts and reads files inside; made writable at start (a Dockerfile would have made them)."""

HANDOFFS: dict[str, Sandbox] = {}
"""Live sandbox backends of this process by handoff key (one per loaded Nenyax environment)."""

DEFAULT_WORKDIR = "/app"
"""Where commands run when neither task.toml nor the Dockerfile says (harbor's own examples use /app)."""

_WORKDIR = re.compile(r"^\s*WORKDIR\s+(\S+)", re.IGNORECASE | re.MULTILINE)


def dockerfile_workdir(environment_dir: Path) -> str | None:
    """The last absolute ``WORKDIR`` of the task's Dockerfile (the one its commands would run in), if any."""
    dockerfile = environment_dir / "Dockerfile"
    if not dockerfile.is_file():
        return None
    found = [w.strip("\"'") for w in _WORKDIR.findall(dockerfile.read_text(errors="replace"))]
    absolute = [w for w in found if w.startswith("/")]
    return absolute[-1] if absolute else None


def cannot_set_up(directory: Path, sandbox: str, why: str) -> str:
    """The sentence for a Dockerfile in `directory` that `sandbox` (which builds no images) cannot set up."""
    return (
        f"The task's {directory.name}/Dockerfile cannot be set up in the {sandbox} sandbox, which builds no "
        f"images: {why}; run it in a sandbox that builds images (?sandbox=docker)."
    )


def replay_problem(directory: Path, sandbox: str) -> str | None:
    """Why the Dockerfile in `directory` cannot be replayed (known before anything runs), else None."""
    dockerfile = directory / "Dockerfile"
    if not dockerfile.is_file():
        return None
    problem = plan(directory, dockerfile).problem
    return cannot_set_up(directory, sandbox, problem) if problem else None


class NenyaxSandboxEnvironment(BaseEnvironment):
    """Harbor's `BaseEnvironment` on a Nenyax sandbox (see the module docstring).

    Options (harbor's ``--ek``): ``sandbox`` (plugin name), ``sandbox_options`` (its factory's options),
    ``handoff`` (a key of `HANDOFFS`), ``image`` (instead of the sandbox's default one), ``network``
    (``none``, ``proxy`` or ``full``) and ``proxy`` (the recording proxy's URL, for ``proxy``).
    """

    def __init__(
        self,
        *args: Any,
        sandbox: str = "bwrap",
        sandbox_options: dict[str, Any] | None = None,
        handoff: str | None = None,
        image: str | None = None,
        network: str = "none",
        proxy: str | None = None,
        **kwargs: Any,
    ) -> None:
        self._sandbox_name = sandbox
        self._sandbox_options = dict(sandbox_options or {})
        self._handoff = handoff
        self._image = image
        self._network = network
        self._proxy = proxy
        self._backend: Sandbox | None = None
        self._owns_backend = False
        self._handle: SandboxHandle | None = None
        self._facts: dict[str, Any] = {}
        self._replay: Plan | None = None
        super().__init__(*args, **kwargs)

    @staticmethod
    def type() -> str:
        """The name harbor shows for this backend."""
        return "nenyax-sandbox"

    @property
    def capabilities(self) -> EnvironmentCapabilities:
        """No network is what Nenyax sandboxes give by default, so harbor's ``no-network`` tasks run."""
        return EnvironmentCapabilities(disable_internet=True)

    def _validate_definition(self) -> None:
        """Nothing to check: a sandbox that cannot build the definition says so when it starts."""

    # ------------------------------------------------------------------ lifecycle

    def _workdir(self) -> str:
        replayed = self._replay.workdir if self._replay is not None else None
        return self.task_env_config.workdir or replayed or dockerfile_workdir(self.environment_dir) or DEFAULT_WORKDIR

    def _spec(self, backend: Sandbox) -> SandboxSpec:
        workdir = self._workdir()
        limits: dict[str, Any] = {
            "cpus": self.task_env_config.cpus or None,
            "memory_mb": self.task_env_config.memory_mb or None,
        }
        common = {"workdir": workdir, "env": self._startup_env(), "network": self._network, **limits}
        dockerfile = self.environment_dir / "Dockerfile"
        docker_image = self.task_env_config.docker_image
        if self._image is not None:
            self._facts["image_source"] = "option"
            return SandboxSpec(image=self._image, **common)
        if backend.capabilities.image_build and docker_image:
            self._facts["image_source"] = "task.toml docker_image"
            return SandboxSpec(image=docker_image, **common)
        if backend.capabilities.image_build and dockerfile.is_file():
            self._facts["image_source"] = "environment/Dockerfile"
            return SandboxSpec(context=self.environment_dir, **common)
        self._facts["image_source"] = "the sandbox's default image"
        if dockerfile.is_file():
            return self._replayed_spec(backend, dockerfile, common)
        if docker_image:
            self._facts["dockerfile_built"] = False
            self._facts["note"] = (
                f"The {self._sandbox_name} sandbox builds no images: the task's docker_image was not used; its "
                f"commands ran in {backend.default_image!r} with workdir {workdir}."
            )
        return SandboxSpec(image=backend.default_image, **common)

    def _cannot(self, why: str) -> InfraFailure:
        return InfraFailure(cannot_set_up(self.environment_dir, self._sandbox_name, why))

    def _replayed_spec(self, backend: Sandbox, dockerfile: Path, common: dict[str, Any]) -> SandboxSpec:
        """The default image, to be set up once started as `dockerfile` sets its image up, or why it cannot be."""
        replay = plan(self.environment_dir, dockerfile)
        if replay.problem is not None:
            raise self._cannot(replay.problem)
        self._replay = replay
        self._facts.update(dockerfile_built=False, dockerfile_replayed=True)
        notes = "".join(f" {note}." for note in replay.notes)
        self._facts["note"] = (
            f"The {self._sandbox_name} sandbox builds no images: the set-up of the task's "
            f"{self.environment_dir.name}/Dockerfile (COPY, RUN, ENV, WORKDIR) was replayed in "
            f"{backend.default_image!r}; its FROM image {replay.base!r} was not used.{notes}"
        )
        env = {**replay.env, **common["env"]}
        return SandboxSpec(image=backend.default_image, **{**common, "workdir": self._workdir(), "env": env})

    async def _set_up(self, box: SandboxHandle) -> None:
        """Replay the Dockerfile's COPY and RUN steps in the started sandbox, in order."""
        if self._replay is None:
            return
        timeout = self.task_env_config.build_timeout_sec or None
        for step in self._replay.steps:
            if isinstance(step, Copy):
                for source in step.sources:
                    into_folder = step.target.endswith("/") and source.is_file()
                    await box.put(
                        source, (step.target + source.name) if into_folder else step.target.rstrip("/") or "/"
                    )
                continue
            done = await box.exec(["mkdir", "-p", step.workdir], timeout=60)
            if done.ok:
                done = await box.exec(["/bin/sh", "-c", step.command], cwd=step.workdir, env=step.env, timeout=timeout)
            if not done.ok:
                lines = (done.stderr or done.stdout).strip().splitlines()
                how = "timed out" if done.timed_out else f"exit {done.exit_code}"
                detail = f": {lines[-1][:300]}" if lines else ""
                raise self._cannot(f"its RUN at line {step.line} failed ({how}){detail}")

    def _backend_now(self) -> Sandbox:
        if self._handoff is not None and self._handoff in HANDOFFS:
            return HANDOFFS[self._handoff]
        self._owns_backend = True
        return create_sandbox(self._sandbox_name, **self._sandbox_options)

    async def start(self, force_build: bool) -> None:
        """Build (or resolve) the image and start a fresh sandbox, with harbor's folders made in it."""
        self._facts = {"sandbox": self._sandbox_name, "network": self._network}
        try:
            self._backend = self._backend_now()
            image = await self._backend.build(self._spec(self._backend))
            self._facts.update(image=image.ref, image_digest=image.digest, workdir=image.spec.workdir)
            if image.spec.context is not None:
                self._facts["dockerfile_built"] = True
            self._handle = await self._backend.start(image, proxy=self._proxy)
            self._facts["unenforced"] = list(self._handle.unenforced)
            made = await self._handle.exec(["mkdir", "-p", *HARBOR_DIRS], timeout=60)
            if not made.ok:
                msg = f"Making harbor's folders in the sandbox failed: {made.stderr.strip() or made.exit_code}."
                raise InfraFailure(msg)
            await self._set_up(self._handle)
        except BaseException as exc:
            self._facts["start_error"] = f"{type(exc).__name__}: {exc}"
            self._write_facts()
            raise
        self._write_facts()
        await self._upload_environment_dir_after_start()

    async def stop(self, delete: bool) -> None:
        """Stop the sandbox (its files go with it) and, if this trial made the backend, close it."""
        if self._handle is not None:
            await self._handle.stop()
            self._handle = None
        if self._owns_backend and self._backend is not None:
            await self._backend.close()
        self._backend = None

    def _write_facts(self) -> None:
        with contextlib.suppress(OSError):
            path = self.trial_paths.trial_dir / FACTS_FILE
            path.write_text(json.dumps(self._facts, indent=2, default=str))

    def _box(self) -> SandboxHandle:
        if self._handle is None:
            msg = "The sandbox is not running (it did not start, or it was stopped)."
            raise InfraFailure(msg)
        return self._handle

    # ------------------------------------------------------------------ files and commands

    async def upload_file(self, source_path: Path | str, target_path: str) -> None:
        """Copy a file in (through the sandbox's `put`)."""
        await self._box().put(Path(source_path), target_path)

    async def upload_dir(self, source_dir: Path | str, target_dir: str) -> None:
        """Copy a folder's contents into `target_dir` (made when missing)."""
        await self._box().put(Path(source_dir), target_dir)

    async def download_file(self, source_path: str, target_path: Path | str) -> None:
        """Copy a file out (through the sandbox's `get`)."""
        await self._box().get(source_path, Path(target_path))

    async def download_dir(self, source_dir: str, target_dir: Path | str) -> None:
        """Copy a folder's contents out into `target_dir`."""
        await self._box().get(source_dir, Path(target_dir))

    async def exec(
        self,
        command: str,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout_sec: int | None = None,
        user: str | int | None = None,
    ) -> ExecResult:
        """Run `command` with bash, as harbor's own backends do (tasks rely on bash semantics)."""
        result = await self._box().exec(
            ["bash", "-c", command],
            cwd=cwd or self._workdir(),
            env=self._merge_env(env),
            timeout=timeout_sec,
            user=self._resolve_user(user),
        )
        if result.timed_out:  # harbor's docker backend says a timeout this way; its callers expect it
            msg = f"Command timed out after {timeout_sec} seconds"
            raise RuntimeError(msg)
        return ExecResult(stdout=result.stdout, stderr=result.stderr, return_code=result.exit_code)
