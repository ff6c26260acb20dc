"""`nenyax eval --backend ray`: the same run directory as in one process, and `--resume` after a killed run.

The first runs go through the CLI in this process, on the suite's Ray instance; the resumed one is the
command in a subprocess of its own, which starts a local Ray instance of its own and shuts it down.
"""

import json

from click.testing import CliRunner

from nenyax.cli.main import cli
from nenyax.core import load_run
from nenyax_testsupport.cli import run_nenyax

URI = "reasoning_gym:basic_arithmetic?size=6"


def _eval(*args):
    result = CliRunner().invoke(cli, ["eval", URI, "--policy", "reference", "-k", "2", "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _played(run_dir):
    return sorted((t.task_id, t.sample, t.seed, t.status.value, t.judgment) for t in load_run(run_dir).trajectories)


def test_eval_on_ray_records_the_run_of_one_process_and_resumes_a_killed_one(ray_instance, tmp_path):
    here = _eval("--quiet", "--out", str(tmp_path / "here"))
    there = _eval("--backend", "ray", "--workers", "2", "--out", str(tmp_path / "there"))
    assert _played(tmp_path / "there") == _played(tmp_path / "here")
    assert there["episodes"] == here["episodes"] == 12
    assert there["mean"] == 1.0
    assert "backend" not in (tmp_path / "there" / "run.toml").read_text()  # where it ran is no part of the run

    # As a run killed mid-write leaves it: five whole records, and half of the sixth.
    jsonl = tmp_path / "there" / "trajectories.jsonl"
    lines = jsonl.read_bytes().splitlines(keepends=True)
    jsonl.write_bytes(b"".join(lines[:5]) + lines[5][: len(lines[5]) // 2])
    (tmp_path / "there" / "summary.json").unlink()
    resumed = run_nenyax("eval", "--resume", str(tmp_path / "there"), "--backend", "ray", "--workers", "2", "-q")
    assert resumed.returncode == 0, resumed.stderr
    assert "5 episode(s) already recorded, 7 to play" in resumed.stderr
    assert json.loads((tmp_path / "there" / "summary.json").read_text())["episodes"] == 12
    assert _played(tmp_path / "there") == _played(tmp_path / "here")  # every (task, sample) once, none cut
    assert len(jsonl.read_bytes().splitlines()) == 12


def test_ray_options_without_the_ray_backend_are_one_sentence(tmp_path):
    done = run_nenyax("eval", URI, "--policy", "null", "--ray-address", "auto", "--out", str(tmp_path / "r"))
    assert done.returncode == 2
    assert "--ray-address says which Ray cluster plays the episodes; add --backend ray." in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "r").exists()
