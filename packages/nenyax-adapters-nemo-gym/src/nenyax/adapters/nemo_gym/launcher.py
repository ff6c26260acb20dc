"""Starting NeMo Gym resources servers on loopback, in the interpreter that has nemo-gym.

nemo-gym needs Python >= 3.12 and a 1.5 GB install; Nenyax runs on 3.11 too. So a server runs as
a subprocess of whichever Python has it: ``NENYAX_NEMO_GYM_PYTHON``, else this interpreter when
nemo-gym is importable here. The subprocess runs `_serve.py` (no Ray, no head server) and exits
when our end of its stdin closes, so it never outlives us.
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import attrs

from nenyax.adapters.nemo_gym import server_kind
from nenyax.core import BadURIError, EnvironmentFailure, UsageError
from nenyax.core.toolkit.suggest import did_you_mean

PYTHON_ENV = "NENYAX_NEMO_GYM_PYTHON"
"""Environment variable naming the Python interpreter that has nemo-gym installed."""
SCRIPT = Path(__file__).with_name("_serve.py")
START_TIMEOUT = 180.0
"""Seconds a server may take to import and start (nemo-gym's imports take 2-20 s on 2 cores)."""


def server_python() -> str:
    """The interpreter to run servers with; a `UsageError` sentence when there is none."""
    configured = os.environ.get(PYTHON_ENV)
    if configured:
        if not (os.path.isfile(configured) and os.access(configured, os.X_OK)):
            msg = (
                f"{PYTHON_ENV} is {configured!r}, which is not an executable; "
                "point it at the python of a venv with nemo-gym."
            )
            raise UsageError(msg)
        return configured
    if importlib.util.find_spec("nemo_gym") is not None and importlib.util.find_spec("resources_servers") is not None:
        return sys.executable
    msg = (
        "Starting a NeMo Gym server by name needs nemo-gym (Python >= 3.12), which this interpreter lacks: "
        f"install it here, set {PYTHON_ENV} to a Python that has it, "
        "or start the server yourself and load nemo_gym:http://host:port?rows=<rows.jsonl>."
    )
    raise UsageError(msg)


@attrs.define(eq=False)
class ServerProcess:
    """A running resources server and what it reported when it came up."""

    url: str
    name: str
    version: str
    datasets: dict[str, str]
    """Dataset name -> JSONL path, for each dataset its configs name that exists locally."""
    process: subprocess.Popen[bytes]
    workdir: Path
    """Its TMPDIR and log (nemo-gym's imports leave empty wandb dirs in TMPDIR)."""
    agents: dict[str, int | None] = attrs.field(factory=dict)
    """The agents its configs play it with (nemo-gym's ``responses_api_agents``) and their ``max_steps``."""
    routes: list[str] | None = None
    """The POST routes it serves (None: not reported)."""

    @property
    def log(self) -> Path:
        """The server's stderr."""
        return self.workdir / "server.log"

    def alive(self) -> bool:
        """True while the process runs."""
        return self.process.poll() is None

    def stop(self) -> None:
        """Stop the process (closing its stdin, then SIGTERM, then SIGKILL) and remove its files."""
        if self.alive():
            if self.process.stdin is not None:
                self.process.stdin.close()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.terminate()
                try:
                    self.process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()
        shutil.rmtree(self.workdir, ignore_errors=True)


def _last_log_line(path: Path) -> str:
    try:
        lines = [line.strip() for line in path.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    return lines[-1][:300] if lines else ""


def start_server(
    python: str,
    *,
    server: str | None = None,
    app: Path | None = None,
    name: str | None = None,
    config: dict[str, Any] | None = None,
    timeout: float = START_TIMEOUT,
) -> ServerProcess:
    """Start a shipped server (`server`, e.g. ``mcqa``) or one of your own (`app`, a path to its app.py)."""
    argv = [python, str(SCRIPT), "--config", json.dumps(config or {})]
    argv += ["--server", server] if server is not None else ["--app", str(app)]
    if name is not None:
        argv += ["--name", name]
    label = server or name or str(app)
    workdir = Path(tempfile.mkdtemp(prefix="nenyax-nemo-gym-"))
    env = {**os.environ, "TMPDIR": str(workdir), "PYTHONUNBUFFERED": "1", "PYTHONNOUSERSITE": "1"}
    with (workdir / "server.log").open("wb") as log:
        process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, cwd=workdir, env=env
        )
    lines: list[bytes] = []
    reader = threading.Thread(target=lambda: lines.append(process.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(timeout)
    line = lines[0] if lines else b""
    try:
        payload = json.loads(line) if line.strip() else None
    except ValueError:
        payload = None
    if not isinstance(payload, dict) or "url" not in payload:
        dead = ServerProcess(url="", name=label, version="", datasets={}, process=process, workdir=workdir)
        log_line = _last_log_line(dead.log)
        dead.stop()
        if isinstance(payload, dict) and "known" in payload:
            raise BadURIError(payload["error"] + did_you_mean(server or "", payload["known"]))
        if isinstance(payload, dict):  # an agent Nenyax does not speak says more than the import that failed
            server_kind.check_agents(label, payload.get("agents") or {})
        if isinstance(payload, dict) and "error" in payload:
            raise EnvironmentFailure(payload["error"] + (f" Its log ends: {log_line}" if log_line else ""))
        why = f"its log ends: {log_line}" if log_line else "it printed nothing"
        msg = f"The NeMo Gym server {label!r} did not start within {timeout:g} s ({why})."
        raise EnvironmentFailure(msg)
    started = ServerProcess(
        url=payload["url"],
        name=payload.get("name", label),
        version=str(payload.get("version", "unknown")),
        datasets=dict(payload.get("datasets", {})),
        process=process,
        workdir=workdir,
        agents=dict(payload.get("agents") or {}),
        routes=payload.get("routes"),
    )
    try:
        server_kind.check_agents(started.name, started.agents)
    except BaseException:
        started.stop()
        raise
    return started


# ---------------------------------------------------------------- shared servers

# One server per (interpreter, server, config) in a process, shared by the environments loaded from
# it and stopped when the last of them closes (or at exit): loading the same URI twice starts one.
_shared: dict[str, list[Any]] = {}
_lock = threading.Lock()


def acquire(server: str, config: dict[str, Any]) -> ServerProcess:
    """A running `server` with `config`, started if none is running in this process."""
    python = server_python()
    if not server.isidentifier():
        msg = f"{server!r} is not a NeMo Gym server name (a folder of resources_servers, e.g. 'mcqa') or an http URL."
        raise BadURIError(msg)
    key = json.dumps([python, server, config], sort_keys=True)
    with _lock:
        entry = _shared.get(key)
        if entry is not None and entry[0].alive():
            entry[1] += 1
            return entry[0]  # type: ignore[no-any-return]
        process = start_server(python, server=server, config=config)
        _shared[key] = [process, 1]
        return process


def release(process: ServerProcess) -> None:
    """One environment is done with `process`; stop it when it was the last."""
    with _lock:
        for key, entry in list(_shared.items()):
            if entry[0] is process:
                entry[1] -= 1
                if entry[1] > 0:
                    return
                del _shared[key]
    process.stop()


@atexit.register
def _stop_all() -> None:
    with _lock:
        entries = list(_shared.values())
        _shared.clear()
    for process, _count in entries:
        process.stop()
