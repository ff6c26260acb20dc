"""Episodes played by `karotte run` on podman: the reference (karotte's fake model) passes every task, the
null policy scores 0, a broken judge is a verifier error, and a `karotte create-env` scaffold says why it
cannot be built here."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import EXAMPLE, EXAMPLE_TASKS, example_copy

from nenyax.core import Status, load

pytestmark = pytest.mark.podman


@pytest.fixture(scope="module")
def env():
    loaded = load(f"karotte:{EXAMPLE}")
    yield loaded
    loaded.close()


def test_the_tasks_are_karottes_own_listing(env):
    assert env.task_ids() == list(EXAMPLE_TASKS)
    assert env.manifest.format == "karotte"
    assert env.manifest.mode.value == "task"
    assert env.manifest.capabilities.reference_policy is True


def test_the_reference_passes_and_null_scores_zero(env):
    # One task here: `nenyax check` (tests/test_cli.py) plays both policies on both, and `nenyax eval` the reference.
    task = "write-greeting"  # the executable judge: a scoring script reads the file the agent wrote
    ref = env.rollout("reference", task=task)
    assert ref.status is Status.OK, ref.error
    assert ref.judgment.score == 1.0
    assert ref.judgment.passed is True
    assert ref.agent == "reference"
    assert not ref.model_calls
    # karotte's transcript is the trajectory's messages: the replayed tool call is in it.
    assert any(m.get("tool_calls") for m in ref.messages if m.get("role") == "assistant")
    null = env.rollout("null", task=task)
    assert null.status is Status.OK, null.error
    assert null.judgment.score == 0.0
    assert null.judgment.passed is False
    # The null policy is karotte's builtin agent answered empty through the proxy: one recorded call.
    assert len(null.model_calls) == 1


def test_a_scoring_script_that_crashes_is_a_verifier_error(tmp_path):
    folder = example_copy(tmp_path)
    script = folder / "src" / "environment" / "tasks" / "write_greeting" / "scoring_script.py"
    script.write_text("raise SystemExit('the grader lost its rubric')\n")
    broken = load(f"karotte:{folder}?task=write-greeting")
    traj = broken.rollout("reference")
    assert traj.status is Status.VERIFIER_ERROR
    assert traj.judgment is None
    assert "CalledProcessError" in traj.error
    assert traj.score is None


def test_a_created_environment_loads_and_says_why_its_image_cannot_be_built(tmp_path):
    # `karotte create-env`, as a user starts: its Containerfile builds FROM amazonlinux, which no registry
    # serves here. Its tasks list; an episode is an infrastructure failure quoting the build's own words.
    bin_dir = Path(sys.executable).parent
    made = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from karotte.cli import entry; sys.argv[0] = 'karotte'; entry()",
            "create-env",
            str(tmp_path / "scaffolded"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        # karotte runs `uv lock` in the new project: the uv of the test group, beside this interpreter.
        env={
            **os.environ,
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        },
    )
    assert made.returncode == 0, made.stderr[-2000:]
    scaffolded = load(f"karotte:{tmp_path / 'scaffolded'}")
    assert scaffolded.task_ids() == ["example-task"]
    assert scaffolded.manifest.capabilities.reference_policy is True  # its fake_model.py
    traj = scaffolded.rollout("reference")
    assert traj.status is Status.INFRA_ERROR
    assert traj.judgment is None
    assert "did not build" in traj.error, traj.error
    assert "amazonlinux" in traj.error, traj.error


def test_out_dir_keeps_karottes_transcript(tmp_path):
    env = load(f"karotte:{EXAMPLE}?task=count-words&out_dir={tmp_path}")
    traj = env.rollout("reference")
    transcript = traj.info["transcript"]
    events = json.loads(Path(transcript).read_text())["events"]
    assert events[-1] == {**events[-1], "type": "task_completed", "status": "passed"}
