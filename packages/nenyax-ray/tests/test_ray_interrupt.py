"""Ctrl-C during a Ray run: the episodes under way are written as interrupted, the workers stop, Ray shuts down.

The run is a script in a subprocess (Ctrl-C is a signal to a whole process), which starts a local Ray
instance of its own; its policy is a function of that script (``__main__``), which travels by value.
"""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from nenyax.core import Status
from nenyax.core.engine.sinks import read_trajectories

_INTERRUPTED_RUN = textwrap.dedent(
    """
    import asyncio, os, sys
    from nenyax.core import Registry, load
    from nenyax_testsupport.fakes import AdapterPlugin, add_up

    async def slow(observation):
        with open(os.environ["MARKS"], "a") as marks:
            marks.write(f"{os.getpid()}\\n")
        await asyncio.sleep(120)
        return add_up(observation)

    if __name__ == "__main__":
        env = load("arith:add?size=6", registry=Registry.from_plugins(("arith", AdapterPlugin())))
        env.rollouts(slow, sink=sys.argv[1], concurrency=2, backend="ray", workers=2)
    """
)


def _descendants(pid):
    """Every process below `pid` (Ray's own services and its workers, for the driver)."""
    children = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def test_ctrl_c_writes_the_episodes_under_way_as_interrupted_and_stops_ray(tmp_path):
    script, sink, marks = tmp_path / "run.py", tmp_path / "t.jsonl", tmp_path / "started"
    script.write_text(_INTERRUPTED_RUN)
    environ = {**os.environ, "MARKS": str(marks)}
    proc = subprocess.Popen([sys.executable, str(script), str(sink)], env=environ, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and not (marks.exists() and len(marks.read_text().split()) >= 4):
            assert proc.poll() is None, proc.stderr.read()
            time.sleep(0.1)
        workers = {int(pid) for pid in marks.read_text().split()}
        assert len(workers) == 2  # two Ray workers, two episodes under way in each
        ray_processes = _descendants(proc.pid)
        assert workers <= set(ray_processes)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGINT, stderr
    assert "KeyboardInterrupt" in stderr
    recorded = list(read_trajectories(sink))
    assert len(recorded) == 4
    assert {t.status for t in recorded} == {Status.INTERRUPTED}
    time.sleep(1)
    for pid in ray_processes:  # the instance it started is shut down: workers, raylet, GCS
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
