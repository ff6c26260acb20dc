"""Replaying in a fresh interpreter with another hash seed: the worker processes the checks talk to."""

from __future__ import annotations

import asyncio
import atexit
import os
import subprocess
import sys
import threading
from typing import Any

import orjson

REPLAY_TIMEOUT = 300.0
"""Seconds a fresh interpreter may take to load an environment and replay one episode."""


def other_hash_seed() -> str:
    """A PYTHONHASHSEED different from this process's (string hashing, set and dict order differ)."""
    mine = os.environ.get("PYTHONHASHSEED", "")
    return str((int(mine) + 1) % 4294967296) if mine.isdigit() else "1"


class _Worker:
    """One long-lived ``python -m nenyax.core.tiers.replay`` process."""

    def __init__(self, hash_seed: str) -> None:
        # This process's import path goes as an argument, not PYTHONPATH: servers the replay starts in turn
        # (another interpreter, another Python version) must not inherit it.
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        paths = orjson.dumps([p for p in sys.path if p]).decode()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "nenyax.core.tiers.replay", paths],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.lock = threading.Lock()

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            assert self.proc.stdin is not None
            assert self.proc.stdout is not None
            self.proc.stdin.write(orjson.dumps(request) + b"\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        if not line:
            msg = f"The fresh interpreter exited (code {self.proc.poll()}) before answering."
            raise RuntimeError(msg)
        return orjson.loads(line)  # type: ignore[no-any-return]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


_workers: dict[str, _Worker] = {}
_workers_lock = threading.Lock()


def _worker(hash_seed: str) -> _Worker:
    with _workers_lock:
        worker = _workers.get(hash_seed)
        if worker is None or worker.proc.poll() is not None:
            worker = _workers[hash_seed] = _Worker(hash_seed)
        return worker


@atexit.register
def _close_workers() -> None:
    for worker in list(_workers.values()):
        worker.close()


async def replay_elsewhere(request: dict[str, Any], hash_seed: str) -> dict[str, Any]:
    """Send `request` to a fresh interpreter with `hash_seed`; a worker that hangs is killed."""
    worker = _worker(hash_seed)
    try:
        return await asyncio.wait_for(asyncio.to_thread(worker.ask, request), REPLAY_TIMEOUT)
    except TimeoutError:
        worker.close()  # unblocks the reading thread; the next request starts a new worker
        msg = f"The fresh interpreter did not replay the episode within {REPLAY_TIMEOUT:g} s."
        raise RuntimeError(msg) from None
