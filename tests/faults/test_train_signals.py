"""`nenyax train` killed with SIGKILL mid-round and resumed, and stopped with Ctrl-C: nothing lost, nothing twice.

The real CLI in a subprocess trains the real `incontext` learner on real reasoning-gym tasks; its model
is `ScriptedModelServer` on loopback with a fixed latency (the embedded model would make each round
minutes on two cores; what is under test is the run directory, not the model). `eval`'s SIGKILL and
Ctrl-C are in tests/test_eval.py, `try` and `check` in packages/nenyax-cli/tests/test_interrupts.py,
`serve` in packages/nenyax-server-openenv/tests/test_command.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter

from nenyax.core import load_run
from nenyax.testing.model_server import ScriptedModelServer, serving_in_thread
from nenyax_testsupport.signals import foreground_sigint

URI = "reasoning_gym:basic_arithmetic?size=300&seed=4"
ROUNDS, GROUP, TASKS, HELDOUT = 3, 2, 6, 8
SETTINGS = ["--rounds", ROUNDS, "--group-size", GROUP, "--tasks-per-round", TASKS, "--heldout", HELDOUT, "-q"]


def start(server: ScriptedModelServer, *args: object) -> subprocess.Popen:
    env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "unused"}
    return subprocess.Popen(
        [sys.executable, "-m", "nenyax.cli", "train", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=foreground_sigint,  # a test run started in the background would pass SIGINT on ignored
    )


def train_args(out) -> list[object]:
    return [URI, "--learner", "incontext", "--model", "openai:scripted", *SETTINGS, "--out", out]


def rounds_of(out) -> list[int]:
    path = out / "metrics.jsonl"
    if not path.exists():
        return []
    return [json.loads(line)["round"] for line in path.read_text().splitlines() if line.endswith("}")]


def wait_for_round(proc: subprocess.Popen, out, number: int) -> None:
    deadline = time.monotonic() + 120
    while number not in rounds_of(out):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(0.3)  # into the next round's episodes


def complete_lines(path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def assert_every_episode_once(out) -> int:
    """Each finished round's episodes once in the run; the unfinished round's first attempt kept aside."""
    run = load_run(out)
    ids = Counter(t.id for t in run.trajectories)
    assert all(count == 1 for count in ids.values()), [i for i, c in ids.items() if c > 1]
    assert len(run.trajectories) == ROUNDS * TASKS * GROUP  # the training episodes of every round, once each
    heldout = lines(out / "heldout.jsonl")
    assert len(heldout) == (ROUNDS + 1) * HELDOUT  # round 0 included
    aside = lines(out / "trajectories.interrupted.jsonl") + lines(out / "heldout.interrupted.jsonl")
    everything = [t.id for t in run.trajectories] + [t["id"] for t in heldout] + [t["id"] for t in aside]
    assert len(set(everything)) == len(everything)  # nothing twice, and nothing dropped to get there
    return len(aside)


def test_sigkill_mid_round_then_resume_records_every_round_and_episode_once(tmp_path):
    out = tmp_path / "run"
    # 0.3 s a reply: a round lasts about a second, so the kill lands inside one (at 0.05 s a whole run ended
    # before the test had looked twice).
    with serving_in_thread(ScriptedModelServer(lambda messages: "7", latency=0.3)) as server:
        proc = start(server, *train_args(out))
        wait_for_round(proc, out, 1)
        # Kill once the round under way has recorded some of its episodes: those are what resume must handle.
        while complete_lines(out / "trajectories.jsonl") <= TASKS * GROUP * rounds_of(out)[-1]:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        assert rounds_of(out)[-1] < ROUNDS
        resumed = start(server, "--resume", out, "-q")
        _, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err
    assert "resuming after round" in err
    assert "Unclosed" not in err  # every loop's client session closed
    assert rounds_of(out) == list(range(ROUNDS + 1))
    aside = assert_every_episode_once(out)
    assert aside > 0  # killed after the unfinished round recorded some episodes
    assert f"{aside} episode(s) of the unfinished round set aside" in err


def test_ctrl_c_stops_within_2_s_with_exit_130_and_resume_finishes(tmp_path):
    out = tmp_path / "run"
    with serving_in_thread(ScriptedModelServer(lambda messages: "7", latency=0.2)) as server:
        proc = start(server, *train_args(out))
        wait_for_round(proc, out, 1)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        took = time.monotonic() - sent
        assert proc.returncode == 130, err
        assert took < 2.0, took
        assert f"nenyax train --resume {out}" in err
        assert "Traceback" not in err
        resumed = start(server, "--resume", out, "-q")
        _, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err
    assert rounds_of(out) == list(range(ROUNDS + 1))
    assert_every_episode_once(out)
