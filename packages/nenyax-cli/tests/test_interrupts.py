"""Ctrl-C and --timeout on real subprocesses: a real SIGINT, a real clock.

The environment is a slow in-memory fake written to disk as a distribution (each step sleeps), since
the point is an episode that is still running when the signal lands; no real environment is that slow
on demand. nenyax-cli's tests install no real adapter (the CLI depends on core alone).
"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from nenyax_testsupport.distributions import write_distribution
from nenyax_testsupport.signals import foreground_sigint

SLOW = '''
import os, sys, time
from typing import Any
from nenyax.core import Capabilities, Judgment, Step
from nenyax.core.hookspecs import PluginSpec, hookimpl
from nenyax_testsupport.fakes import ArithAdapter, ArithEnvironment, ArithSession


class SlowSession(ArithSession):
    """`turns` steps of `delay` seconds each; touches $SLOW_MARK once it is under way."""

    def __init__(self, env, task):
        super().__init__(env, task)
        self.played = 0

    @property
    def done(self):
        return self.played >= self.env.turns

    def act(self, action: Any) -> Step:
        mark = os.environ.get("SLOW_MARK")
        if mark:
            open(mark, "a").close()
        time.sleep(self.env.delay)
        self.played += 1
        return Step(observation=self.observation, action=action, reward=0.0, terminated=self.done)

    def judge(self, steps):
        return Judgment(score=1.0, passed=True, judge="slow")


class SlowEnvironment(ArithEnvironment):
    def session(self, task=None, seed=None):
        return SlowSession(self, task or self.task_ids(limit=1)[0])


class SlowAdapter(ArithAdapter):
    def load(self, uri, context=None):
        mark = os.environ.get("SLOW_MARK")
        if mark and uri.params.get("load"):
            open(mark + ".load", "a").close()
        time.sleep(float(uri.params.get("load", 0)))  # an environment (or a model) slow to load
        main = getattr(sys.modules["__main__"], "__spec__", None)
        if uri.params.get("replay_load") and getattr(main, "name", "").endswith("tiers.replay"):
            if mark:  # check's fresh interpreter, which the command waits on from a thread
                open(mark + ".replay", "a").close()
            time.sleep(float(uri.params["replay_load"]))
        caps = Capabilities(seeded=True, stable_task_ids=True, reference_policy=True, max_turns=None)
        env = SlowEnvironment(uri.raw, size=5, seed=0, capabilities=caps)
        env.delay, env.turns = float(uri.params.get("delay", 0.2)), int(uri.params.get("turns", 1000))
        return env


@hookimpl
def nenyax_register_adapters():
    return PluginSpec(kind="adapter", name="arith", factory="nenyax_slow_plugin:SlowAdapter", summary="slow fake")
'''


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    return write_distribution(
        tmp_path_factory.mktemp("site"),
        "nenyax-slow",
        "1.0",
        {"arith": "nenyax_slow_plugin"},
        {"nenyax_slow_plugin": SLOW},
    )


def _ignore_sigint():
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def start(site, mark, *args, background=False):
    """The CLI in a subprocess; `background`: with SIGINT ignored, as a shell starts `nenyax ... &`."""
    env = {**os.environ, "PYTHONPATH": str(site), "NENYAX_STRICT_PLUGINS": "0", "SLOW_MARK": str(mark)}
    return subprocess.Popen(
        [sys.executable, "-m", "nenyax.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        # Without this, a test run started in the background would pass SIGINT on to the CLI ignored.
        preexec_fn=_ignore_sigint if background else foreground_sigint,
    )


def interrupt_when_running(proc, mark):
    deadline = time.monotonic() + 60
    while not mark.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(0.3)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    return out, err, time.monotonic() - sent


@pytest.mark.parametrize("timer", [[], ["--timeout", "600"]], ids=["no-loop", "event-loop"])
def test_ctrl_c_in_try_keeps_the_episode_and_exits_130(site, tmp_path, timer):
    saved, mark = tmp_path / "t.jsonl", tmp_path / "mark"
    proc = start(site, mark, "try", "arith:add", "--policy", "reference", "--save", str(saved), *timer)
    out, err, took = interrupt_when_running(proc, mark)
    assert proc.returncode == 130, err
    assert took < 2.5
    assert "Traceback" not in err
    assert "Interrupted" in err
    assert str(saved) in err
    [record] = [json.loads(line) for line in saved.read_text().splitlines()]
    assert record["status"] == "interrupted"
    assert len(record["steps"]) >= 1
    assert record["judgment"] is None
    assert "interrupted" in out  # the replay of what was played is shown


def test_ctrl_c_in_check_stops_it_and_exits_130(site, tmp_path):
    mark = tmp_path / "mark"
    proc = start(site, mark, "check", "arith:add?delay=0.1&turns=50", "--json")
    out, err, took = interrupt_when_running(proc, mark)
    assert proc.returncode == 130, err
    assert took < 2.5
    assert "Traceback" not in err
    assert "Interrupted" in err
    assert json.loads(out)["error"]["kind"] == "interrupted"


def test_timeout_bounds_try_and_records_the_episode_as_timeout(site, tmp_path):
    saved = tmp_path / "t.jsonl"
    began = time.monotonic()
    proc = start(
        site,
        tmp_path / "mark",
        "try",
        "arith:add?delay=30",
        "--policy",
        "reference",
        # Counted from the command's start: room for the imports (seconds on a loaded machine or a newer
        # Python), so the episode begins and its own timeout, not the command's backstop, ends it.
        "--timeout",
        "4",
        "--save",
        str(saved),
    )
    _, err = proc.communicate(timeout=60)
    assert time.monotonic() - began < 15  # imports included; the step alone would take 30 s
    assert proc.returncode == 1, err
    assert json.loads(saved.read_text())["status"] == "timeout"


def test_timeout_bounds_try_s_loading_too(site, tmp_path):
    # The environment takes 30 s to load: --timeout 2 counts from the command's start, not the episode's.
    began = time.monotonic()
    proc = start(site, tmp_path / "mark", "try", "arith:add?load=30", "--policy", "reference", "--timeout", "2")
    _, err = proc.communicate(timeout=60)
    assert time.monotonic() - began < 15  # 2 s, the 2 s grace to record an episode, and the imports
    assert proc.returncode == 1, err
    assert "within its --timeout of 2 s" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("background", [False, True], ids=["foreground", "sigint-ignored"])
def test_timeout_bounds_the_whole_check(site, tmp_path, background):
    began = time.monotonic()
    args = ["check", "arith:add?delay=0.5&turns=20", "--timeout", "2", "--json"]
    proc = start(site, tmp_path / "mark", *args, background=background)
    out, err = proc.communicate(timeout=60)
    assert time.monotonic() - began < 15
    assert proc.returncode == 1, err
    assert "within its --timeout of 2 s" in json.loads(out)["error"]["message"]


@pytest.mark.parametrize("command", ["try", "check"])
def test_ctrl_c_stops_a_command_whose_loop_is_blocked_by_a_slow_load(site, tmp_path, command):
    # The environment's load blocks for 30 s (an import that takes long does the same), in the event loop
    # where a command loads it there: cancelling the main task reaches nothing until the loop runs again.
    mark = tmp_path / "mark"
    policy = ["--policy", "reference"] if command == "try" else []
    proc = start(site, mark, command, "arith:add?load=30&delay=0", *policy)
    loading = tmp_path / "mark.load"
    deadline = time.monotonic() + 60
    while not loading.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(0.3)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert time.monotonic() - sent < 2.5
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert "Interrupted" in err


def test_ctrl_c_stops_check_while_a_thread_waits_on_its_fresh_interpreter(site, tmp_path):
    # check replays episodes in a fresh interpreter, waited on from a thread of the loop's executor; the
    # replay's load takes 30 s. asyncio.run's close joined that thread, holding Ctrl-C until it ended.
    mark = tmp_path / "mark"
    proc = start(site, mark, "check", "arith:add?replay_load=30&delay=0&turns=2")
    replaying = tmp_path / "mark.replay"
    deadline = time.monotonic() + 90
    while not replaying.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(0.3)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert time.monotonic() - sent < 2.5
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert "Interrupted" in err
