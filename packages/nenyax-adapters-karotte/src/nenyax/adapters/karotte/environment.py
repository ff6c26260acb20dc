"""`KarotteEnvironment`: a karotte environment's tasks, each episode one ``karotte run`` on a local engine.

karotte's own runner plays every episode: ``karotte run --runtime podman --no-ui`` builds the environment's
image from its Containerfile, starts a container, and inside it karotte's harness serves the task's tools
over MCP, drives the agent turn by turn, scores each step with the step's judge and writes the transcript,
which is read back here (`judgment`). The built-in policies are karotte's own: ``reference`` is its fake
model replaying the environment's ``fake_model.py``; every other policy is karotte's builtin agent on the
``hosted_vllm/`` route, whose calls reach the episode's recording proxy. The container keeps karotte's own
bridge network; the proxy is reached on the container's own loopback, where a listener of Nenyax's
(`ProxyLink`, in the container's network namespace) forwards to it, so the proxy never listens beyond
this machine's loopback.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import socket
import tempfile
import uuid
from importlib import metadata
from pathlib import Path
from typing import Any

from nenyax.adapters.karotte import base_image
from nenyax.adapters.karotte.judgment import read_events, result
from nenyax.adapters.karotte.options import KarotteSpec
from nenyax.adapters.karotte.tasks import KarotteTask
from nenyax.adapters.karotte.zygote import LAUNCHER, alive, stop
from nenyax.core import (
    Capabilities,
    Manifest,
    Mode,
    NativeEpisode,
    NativeResult,
    Split,
    Status,
    TaskEnvironment,
    UnsupportedPolicyError,
)
from nenyax.core.toolkit.sandbox import ProxyLink
from nenyax.core.toolkit.tasks import one_split_ids, pick

_LOG_TAIL = 4000


def _karotte_version() -> str:
    try:
        return metadata.version("karotte")
    except metadata.PackageNotFoundError:
        return "unknown"


def image_name(folder: Path) -> str:
    """The image karotte builds for `folder`: karotte's own name for a source environment."""
    try:
        from karotte.env_source import image_name_for
    except ImportError:  # an older karotte: the same scheme
        import hashlib

        return f"karotte-{folder.name.lower()}-{hashlib.sha256(str(folder).encode()).hexdigest()[:8]}"
    return str(image_name_for(folder, folder.name))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def uses_base_image(folder: Path) -> bool:
    """Whether the environment's Containerfile builds on the base image the adapter makes here."""
    text = (folder / "Containerfile").read_text(errors="replace")
    return any(line.split()[1:2] == [base_image.BASE_IMAGE] for line in text.splitlines() if line.startswith("FROM"))


class KarotteEnvironment(TaskEnvironment):
    """The tasks of one karotte environment folder (see the module docstring)."""

    def __init__(self, spec: KarotteSpec, tasks: list[KarotteTask]) -> None:
        self.spec = spec
        self.folder = spec.folder
        self.tasks = {task.id: task for task in tasks}
        self.replays = (self.folder / "src" / "environment" / "fake_model.py").is_file()
        # Whether the image the Containerfile builds FROM is there: checked once per environment, not per run.
        self._base_ready = not uses_base_image(self.folder)
        extra: dict[str, Any] = {
            "runtime": spec.runtime,
            "image": image_name(self.folder),
            "agents": {
                "reference": "fake model (fake_model.py)",
                "null": "builtin, answered empty",
                "model": "builtin",
            },
            "tasks": {task.id: {"tools": list(task.tools)} for task in tasks},
        }
        if not self.replays:
            extra["no_reference"] = "The environment has no src/environment/fake_model.py for karotte's fake model."
        super().__init__(
            Manifest(
                uri=spec.uri,
                format="karotte",
                format_version=_karotte_version(),
                mode=Mode.TASK,
                name=self.folder.name,
                description=f"{len(tasks)} karotte task(s) of the environment {self.folder.name}",
                splits=(Split(name="tasks", count=len(tasks)),),
                observation="each step's instructions, and the task's MCP tools in the environment's container",
                action="tool calls (bash and the task's other tools) and a final message per step",
                score_range=None,  # a judge's script may write any number
                extra=extra,
                capabilities=Capabilities(
                    stable_task_ids=True,
                    reference_policy=self.replays,
                    null_policy=True,
                    random_policy=True,
                    multi_turn=True,
                    concurrent_sessions=True,
                    max_turns=spec.turn_limit,
                ),
            )
        )

    def task_ids(self, split: str | None = None, limit: int | None = None) -> list[str]:
        """karotte's task ids, in karotte's order."""
        return one_split_ids(self.uri, self.tasks, split, limit)

    def _config(self, episode: NativeEpisode, task_id: str, run_id: str, transcript: Path) -> dict[str, Any]:
        config: dict[str, Any] = {
            "run_id": run_id,
            "task_id": task_id,
            # karotte's route for a model on an OpenAI-compatible server of one's own: its calls go to the proxy.
            "model": f"hosted_vllm/{episode.model}",
            "model_api_key": episode.api_key,
            "transcript_file": str(transcript),
            "use_fake_model": episode.agent == "reference",
        }
        if self.spec.turn_limit is not None:
            config["turn_limit"] = self.spec.turn_limit
        if self.spec.step_time_limit is not None:
            config["step_time_limit_seconds"] = self.spec.step_time_limit
        return config

    async def _base_image(self) -> None:
        """Make the shipped examples' base image once, before the first run that needs it."""
        if self._base_ready:
            return
        # `ensure` takes a lock file: episodes on any thread, loop or process make the image once.
        await asyncio.to_thread(base_image.ensure, self.spec.runtime.split(":")[0])
        self._base_ready = True

    async def run(self, episode: NativeEpisode) -> NativeResult:
        """One ``karotte run`` of the task with the policy's agent, judged by the task's own judges."""
        task_id = pick(self.uri, episode.task_id, self.tasks)
        if episode.agent == "reference" and not self.replays:
            raise UnsupportedPolicyError(f"{self.uri} has no src/environment/fake_model.py for karotte's fake model.")
        await self._base_image()
        run_id = f"nx{uuid.uuid4().hex[:10]}"
        keep = self.spec.out_dir is not None
        out = self.spec.out_dir / run_id if self.spec.out_dir else Path(tempfile.mkdtemp(prefix="nenyax-karotte-"))
        out.mkdir(parents=True, exist_ok=True)
        transcript = out / "transcript.json"
        model = episode.agent != "reference"
        args = ["run", "--runtime", self.spec.runtime, "--no-ui", "--websocket-port", str(_free_port())]
        args += ["--config", json.dumps(self._config(episode, task_id, run_id, transcript))]
        # karotte adds /v1 to its proxy URL itself.
        args += ["--proxy", episode.base_url.removesuffix("/").removesuffix("/v1")] if model else ["--no-proxy"]
        env = {"KAROTTE_IMAGE": image_name(self.folder)}
        log = out / "karotte.log"
        try:
            model_failed = await self._play(args, env, log, transcript, run_id, episode.base_url if model else None)
            tail = log.read_text(errors="replace")[-_LOG_TAIL:] if log.exists() else ""
            if model_failed:  # the proxy's classification of the call wins over anything said here
                msg = "karotte's model call failed, and the run was stopped rather than retried for minutes."
                return NativeResult(judgment=None, status=Status.INFRA_ERROR, error=msg, info={})
            done = result(transcript, _last_lines(tail), None)
            if keep:
                done.info.update({"transcript": str(transcript), "log": str(log)})
            if done.status is Status.INFRA_ERROR and "Failed to build" in tail:
                why = _last_lines(tail.split("Failed to build")[0], 6)
                msg = f"The image of {self.folder.name} did not build: {why}"
                return NativeResult(judgment=None, status=Status.INFRA_ERROR, error=msg, info=done.info)
            return done
        finally:
            if not keep:
                shutil.rmtree(out, ignore_errors=True)

    async def _play(
        self, args: list[str], env: dict[str, str], log: Path, transcript: Path, run_id: str, proxy: str | None
    ) -> bool:
        """Run karotte until its run is settled, linking the proxy into its container once that starts;
        returns whether a model call failed (then the proxy's record of it decides the episode)."""
        engine = self.spec.runtime.split(":")[0]
        container = f"karotte_run_{run_id}"
        request = {"args": args, "cwd": str(self.folder), "src": str(self.folder / "src"), "env": env, "log": str(log)}
        pid = await asyncio.to_thread(LAUNCHER.spawn, request)
        link = ProxyLink(proxy) if proxy else None
        try:
            if link is not None:
                started = await _container_pid(engine, container, pid)
                if started is not None:
                    await link.open(started)
            watch = _Watch(transcript, log)
            await _until_finished(pid, watch)
            if alive(pid):
                # The run is settled and written down (or its model failed, which the proxy recorded). What
                # karotte does next is tear-down, giving its MCP server up to 10 s to stop, or retries of a
                # failed call: the container goes now, and karotte sees it gone.
                await _remove(engine, container)
                await _until_finished(pid, None, limit=30.0)
            return watch.model_failed
        finally:
            if alive(pid):  # cancelled or timed out: stop karotte and its container
                stop(pid)
                await _remove(engine, container)
            if link is not None:
                await link.close()


async def _container_pid(engine: str, container: str, pid: int) -> int | None:
    """The first process of `container` once it runs; None when karotte (`pid`) ended before starting it."""
    while alive(pid):
        inspect = await asyncio.create_subprocess_exec(
            engine,
            "inspect",
            "--format",
            "{{.State.Pid}}",
            container,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        out, _ = await inspect.communicate()
        with contextlib.suppress(ValueError):
            found = int(out.decode().strip() or 0)
            if found > 0:
                return found
        await asyncio.sleep(0.1)
    return None


class _Watch:
    """What the run has written so far: its transcript's end, and karotte's word that a model call failed."""

    MODEL_CALL_FAILED = "LLM call failed"
    """karotte's log line for a failed model call, which it retries for up to some 10 minutes (16 tries); the
    proxy has classified the failure already, and that decides the episode whatever karotte does next."""

    def __init__(self, transcript: Path, log: Path) -> None:
        self.transcript, self.log = transcript, log
        self._read = 0
        self.model_failed = False

    def over(self) -> bool:
        """Whether the run's outcome is settled: the task ended, or a model call failed."""
        if self.log.exists() and not self.model_failed:
            start = max(self._read - len(self.MODEL_CALL_FAILED), 0)  # a line the last read cut in two
            with self.log.open("rb") as lines:
                lines.seek(start)
                fresh = lines.read()
            self._read = start + len(fresh)
            self.model_failed = self.MODEL_CALL_FAILED.encode() in fresh
        if self.model_failed:
            return True
        events = read_events(self.transcript) if self.transcript.exists() else None
        return bool(events) and any(event.get("type") == "task_completed" for event in events or ())


async def _until_finished(pid: int, watch: _Watch | None, limit: float | None = None) -> None:
    """Until karotte (`pid`) exits, or what it wrote settles the run (`watch`), or `limit` seconds pass."""
    waited = 0.0
    while alive(pid) and (limit is None or waited < limit):
        if watch is not None and watch.over():
            return
        await asyncio.sleep(0.2)
        waited += 0.2


async def _remove(engine: str, container: str) -> None:
    """Kill the container at once (a plain ``rm --force`` waits out its stop timeout first), then remove it."""
    for verb in (["kill"], ["rm", "--force"]):
        done = await asyncio.create_subprocess_exec(
            engine, *verb, container, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
        )
        await done.wait()


def _last_lines(text: str, count: int = 4) -> str:
    """The last lines that say something (karotte's own log lines, not its blank or decorative ones)."""
    lines = [line.strip() for line in text.splitlines() if line.strip() and not set(line.strip()) <= set("─━=-")]
    return " ".join(" ".join(lines[-count:]).split())[-600:]
