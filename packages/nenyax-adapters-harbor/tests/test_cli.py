"""The CLI on harbor tasks: `nenyax check` reaches audited, `nenyax eval` runs every task of a dataset."""

import itertools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nenyax.adapters.harbor.adapter import EXAMPLES_DIR, example_task


def _nenyax(*args, cwd=None, timeout=240):
    # The console script beside this interpreter (the venv's), else the module.
    script = Path(sys.executable).with_name("nenyax")
    argv = [str(script)] if script.exists() else [sys.executable, "-m", "nenyax.cli"]
    return subprocess.run(
        [*argv, *args], capture_output=True, text=True, timeout=timeout, check=False, cwd=cwd, env=os.environ.copy()
    )


def test_the_commands_exist():
    done = _nenyax("--help")
    assert done.returncode == 0, done.stderr
    for command in ("check", "try", "eval"):
        assert command in done.stdout


def test_check_reaches_audited():
    done = _nenyax("check", example_task("hello-file"), "--require", "audited", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["tier"] == "audited"


@pytest.mark.parametrize("concurrency", [3])
def test_eval_runs_every_task_of_a_dataset_concurrently(tmp_path, concurrency):
    out = tmp_path / "run"
    done = _nenyax(
        "eval",
        f"harbor:{EXAMPLES_DIR}",
        "--policy",
        "oracle",  # harbor's name for the reference policy
        "--concurrency",
        str(concurrency),
        "--out",
        str(out),
        "--json",
        "-q",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [json.loads(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]
    assert sorted(row["task_id"] for row in rows) == ["count-lines", "hello-file", "reverse-words"]
    assert all(row["status"] == "ok" and row["judgment"]["score"] == 1.0 for row in rows)
    assert {row["policy"]["kind"] for row in rows} == {"reference"}
    # Concurrent: some two episodes were running at the same moment.
    spans = sorted((row["timing"]["started"], row["timing"]["ended"]) for row in rows)
    assert any(later[0] < earlier[1] for earlier, later in itertools.pairwise(spans))
    assert shutil.which("bwrap")


def test_try_runs_terminus_2_with_the_embedded_model_recording_its_tokens():
    # SmolLM2-135M does not solve the task (it rarely speaks terminus-2's JSON): what is checked is that
    # harbor's own agent drove the embedded model through the proxy, every call with its token ids.
    done = _nenyax(
        "try",
        example_task("hello-file") + "?max_turns=1&agent_timeout=15",
        "-m",
        "local:smollm2-135m",
        "--max-tokens",
        "48",
        "--json",
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    traj = json.loads(done.stdout)
    assert traj["status"] == "ok", traj.get("error")
    assert traj["info"]["harbor_agent"] == "terminus-2"
    calls = traj["model_calls"]
    assert calls
    for call in calls:
        assert call["provider"] == "local"
        assert call["prompt_token_ids"]
        assert call["completion_token_ids"]
        assert len(call["logprobs"]) == len(call["completion_token_ids"])
