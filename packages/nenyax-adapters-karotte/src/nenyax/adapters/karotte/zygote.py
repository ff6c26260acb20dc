"""A process that imports karotte's command line once and forks one ``karotte run`` per episode.

Every ``karotte run`` imports what its in-container half needs, even on the host that only builds and
starts the container: litellm through its agents, fastmcp through its MCP server. That is some 10 s of
CPU per run on a small machine, more than the run itself. This process pays it once; each request is a
fork that runs karotte's own ``entry()`` with the run's arguments, in the environment's folder, its
output in a log file. The child is karotte's command line, unchanged; only the import is shared.

The protocol, one JSON object per line: the parent writes ``{"args", "cwd", "src", "env", "log"}``; this
process answers ``{"pid": ...}`` for each (the child leads a process group of its own), after a first
``{"ready": true}``. Children are reaped here; the parent watches them by pid.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import traceback

from nenyax.core.errors import InfraFailure


def _child(request: dict) -> int:
    """Become the ``karotte run`` the request describes; returns its exit status."""
    os.setsid()  # its own process group: a stop kills karotte and the engine client it started together
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.chdir(request["cwd"])
    sys.path.insert(0, request["src"])  # the environment package karotte loads its tasks from
    os.environ.update(request["env"])
    for name in request.get("unset", ()):
        os.environ.pop(name, None)
    sys.argv = ["karotte", *request["args"]]
    from karotte.cli import entry

    try:
        entry()
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else int(stop.code is not None)
    return 0


def main() -> None:
    """Import, say ready, then fork one child per request line until stdin closes."""
    import karotte.agents
    import karotte.cli.run
    import karotte.mcp_servers.http_mcp_server  # noqa: F401

    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children reap themselves; the parent watches their pids
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # karotte waits for its own subprocesses
            code = 1
            try:
                code = _child(request)
            except BaseException:  # noqa: BLE001 - whatever karotte raised is in its log, the exit says failed
                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        print(json.dumps({"pid": pid}), flush=True)


if __name__ == "__main__":
    main()


class Zygote:
    """The parent's side: the launcher process, started on first use, shared by every environment here.

    Plain blocking pipes behind a lock (each request is one line out and one line back), so any event loop
    or thread may ask; `spawn` runs on a worker thread from async code.
    """

    def __init__(self) -> None:
        import threading

        self._lock = threading.Lock()
        self._process: subprocess.Popen[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        env = {k: v for k, v in os.environ.items() if k != "CI"}
        env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # litellm's import fetches a price list from GitHub otherwise
        process = subprocess.Popen(
            [sys.executable, "-m", "nenyax.adapters.karotte.zygote"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert process.stdout is not None
        if not process.stdout.readline().strip():
            error = process.stderr.read() if process.stderr else ""
            raise InfraFailure(f"karotte's command line did not start: {' '.join(error.split())[-400:]}")
        return process

    def spawn(self, request: dict) -> int:
        """Fork one ``karotte run`` (see the module docstring); returns its pid."""
        with self._lock:
            if self._process is None or self._process.poll() is not None:
                self._process = self._start()
            assert self._process.stdin is not None
            assert self._process.stdout is not None
            self._process.stdin.write(json.dumps(request) + "\n")
            self._process.stdin.flush()
            reply = self._process.stdout.readline()
        if not reply:
            raise InfraFailure("karotte's launcher process ended before it started the run.")
        return int(json.loads(reply)["pid"])


def alive(pid: int) -> bool:
    """Whether the run forked as `pid` still runs (the launcher reaps its children at once)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop(pid: int) -> None:
    """Kill the run's process group: karotte and the engine client it started."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


LAUNCHER = Zygote()
"""This process's launcher."""
