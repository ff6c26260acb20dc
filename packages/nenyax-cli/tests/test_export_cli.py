"""`nenyax export` on a run `nenyax eval` recorded (the fake `arith` adapter, installed as a distribution),
with core's own ``jsonl`` exporter: what it writes, where, and the bad input it refuses (exit 2, one line)."""

import os
import subprocess
import sys

import orjson
import pytest


def nenyax(site, tmp_path, *args):
    checks = str(tmp_path / "checks")
    env = {**os.environ, "PYTHONPATH": str(site), "NENYAX_STRICT_PLUGINS": "0", "NENYAX_CHECKS_DIR": checks}
    return subprocess.run(
        [sys.executable, "-m", "nenyax.cli", *args], capture_output=True, text=True, env=env, timeout=300, check=False
    )


@pytest.fixture(scope="module")
def run(site, tmp_path_factory):
    """A run directory of 3 tasks x 2 samples of the reference policy on arith."""
    tmp = tmp_path_factory.mktemp("eval")
    path = tmp / "run"
    done = nenyax(
        site, tmp, "eval", "arith:add", "--policy", "reference", "--tasks", "3", "-k", "2", "--out", str(path), "-q"
    )
    assert done.returncode == 0, done.stderr
    return path


def test_export_writes_raw_rows_beside_the_run_by_default(site, run, tmp_path):
    done = nenyax(site, tmp_path, "export", str(run))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"Wrote 6 raw row(s) from 6 trajectories to {run / 'raw.jsonl'}"
    written = [orjson.loads(line) for line in (run / "raw.jsonl").read_bytes().splitlines()]
    assert len(written) == 6
    assert {r["env_uri"] for r in written} == {"arith:add"}
    assert all(r["status"] == "ok" and r["score"] == 1.0 for r in written)
    assert len({r["group_id"] for r in written}) == 3, "one group per task"


def test_export_json_names_the_destination_and_counts(site, run, tmp_path):
    out = tmp_path / "rows" / "all.jsonl"
    done = nenyax(site, tmp_path, "export", str(run / "trajectories.jsonl"), "--out", str(out), "--json")
    assert done.returncode == 0, done.stderr
    said = orjson.loads(done.stdout)
    assert said == {
        "destination": str(out),
        "exporter": "jsonl",
        "rows": "raw",
        "tokenized": False,
        "trajectories": 6,
        "written": 6,
        "cut_off": None,
    }


def test_a_cut_off_tail_is_reported_and_the_complete_records_exported(site, run, tmp_path):
    whole = (run / "trajectories.jsonl").read_bytes()
    killed = tmp_path / "killed.jsonl"
    killed.write_bytes(whole[:-40])
    done = nenyax(site, tmp_path, "export", str(killed))
    assert done.returncode == 0, done.stderr
    assert "Wrote 5 raw row(s) from 5 trajectories" in done.stdout
    assert done.stderr.startswith("Note: left ")
    assert "the complete records before it were exported" in done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--to", "jsnl"), "Error: No exporter named 'jsnl' is installed. Did you mean 'jsonl'?"),
        (("--rows", "dop"), "Error: There is no row shape 'dop'. Did you mean 'dpo'?"),
        (
            ("--rows", "raw", "--tokenized"),
            "Error: Only sft rows come pre-tokenized, not raw rows; drop --tokenized or use --rows sft.",
        ),
    ],
)
def test_bad_input_is_one_sentence_and_exit_2(site, run, tmp_path, args, message):
    done = nenyax(site, tmp_path, "export", str(run), *args)
    assert done.returncode == 2
    assert done.stderr.strip() == message


def test_an_empty_file_and_a_shape_nothing_makes_are_refused(site, run, tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    done = nenyax(site, tmp_path, "export", str(empty))
    assert done.returncode == 2
    assert done.stderr.strip() == f"Error: {empty} holds no complete trajectory; there is nothing to export."
    # arith's reference policy plays no chat: no sft row, and no file left behind.
    done = nenyax(site, tmp_path, "export", str(run), "--rows", "sft")
    assert done.returncode == 2
    assert "makes a row of the sft shape: one needs an ok, judged trajectory with an assistant turn" in done.stderr
    assert not (run / "sft.jsonl").exists()


def test_export_tasks_writes_prompt_rows_a_trainer_loads_and_refuses_bad_input_in_one_line(site, tmp_path):
    out = tmp_path / "tasks.jsonl"
    done = nenyax(site, tmp_path, "export-tasks", "arith:add", "--limit", "4", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"Wrote 4 task row(s) to {out}"
    rows = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert [r["env_uri"] for r in rows] == ["arith:add"] * 4
    assert len({r["task_id"] for r in rows}) == 4
    assert all(r["prompt"][-1]["role"] == "user" for r in rows)
    bad = nenyax(site, tmp_path, "export-tasks", "arith:add", "--limit", "0", "--out", str(tmp_path / "no.jsonl"))
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == ["Error: limit must be at least 1, not 0."]
    assert not (tmp_path / "no.jsonl").exists()
