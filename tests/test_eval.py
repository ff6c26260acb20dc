"""`nenyax eval` on the real reasoning-gym adapter, through the real CLI in fresh processes.

The kill test kills a real `nenyax eval` with SIGKILL while it writes, then `--resume` finishes it.
"""

import json
import os
import signal
import subprocess
import sys
import time
import tomllib

from nenyax.core import load_run
from nenyax_testsupport.signals import foreground_sigint

URI = "reasoning_gym:basic_arithmetic"


def nenyax(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "nenyax.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=600,
        check=False,
    )


def pairs(run_dir):
    return [(t.task_id, t.sample) for t in load_run(run_dir).trajectories]


def test_eval_writes_a_run_directory_with_the_figures(tmp_path):
    done = nenyax("eval", f"{URI}?size=12", "--policy", "reference", "--samples", "3", "--out", str(tmp_path / "r"))
    assert done.returncode == 0, done.stderr
    for fact in ("mean score  1.000", "95% CI", "pass@1 1.000  pass@2 1.000  pass@3 1.000", "score >= 1", "ok 36"):
        assert fact in done.stdout
    run = load_run(tmp_path / "r")
    assert sorted(pairs(tmp_path / "r")) == sorted((f"basic_arithmetic/42/{i}", k) for i in range(12) for k in range(3))
    for i in range(12):  # the samples of a task share one group id, and tasks do not share theirs
        assert len({t.group_id for t in run.trajectories if t.task_id == f"basic_arithmetic/42/{i}"}) == 1
    assert len({t.group_id for t in run.trajectories}) == 12
    assert run.summary.episodes == 36
    assert run.summary.pass_at_k == {"1": 1.0, "2": 1.0, "3": 1.0}
    assert run.config.versions["nenyax-adapters-reasoning-gym"]
    assert run.config.manifest_digest.startswith("sha256:")


def test_a_null_policy_scores_zero_with_an_interval(tmp_path):
    done = nenyax("eval", f"{URI}?size=5", "--policy", "null", "--json", "--out", str(tmp_path / "r"))
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["mean"] == 0.0
    assert summary["pass_at_k"] == {"1": 0.0}
    assert summary["statuses"]["ok"] == 5


def test_kill_9_mid_run_then_resume_records_every_episode_exactly_once(tmp_path):
    run_dir, size, samples = tmp_path / "r", 20000, 2
    args = ["eval", f"{URI}?size={size}", "--policy", "reference", "--samples", str(samples), "--out", str(run_dir)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "nenyax.cli", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    jsonl = run_dir / "trajectories.jsonl"
    deadline = time.monotonic() + 300
    while not (jsonl.exists() and jsonl.stat().st_size > 200_000) and proc.poll() is None:
        assert time.monotonic() < deadline, "the run never started writing"
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read()
    before = len(pairs(run_dir))
    assert 0 < before < size * samples  # killed mid-run, not after it
    with jsonl.open("ab") as f:  # and the last write cut half way, whatever the kill left
        f.write(b'{"env_uri": "reasoning_gym:basic_arithmetic", "task_id": "basic_arithmetic/42/0", "sta')
    done = nenyax("eval", "--resume", str(run_dir), "--json")
    assert done.returncode == 0, done.stderr
    recorded = pairs(run_dir)
    assert len(recorded) == len(set(recorded)) == size * samples
    summary = json.loads(done.stdout)
    assert summary["episodes"] == size * samples
    assert summary["resumed"] == before
    assert summary["mean"] == 1.0
    assert summary["pass_at_k"] == {"1": 1.0, "2": 1.0}


def test_resume_refuses_to_change_the_run(tmp_path):
    assert nenyax("eval", f"{URI}?size=3", "--policy", "reference", "--out", str(tmp_path / "r")).returncode == 0
    done = nenyax("eval", "--resume", str(tmp_path / "r"), "--samples", "2")
    assert done.returncode == 2
    assert "differs in samples" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_run_toml_reproduces_its_run(tmp_path):
    first = nenyax("eval", f"{URI}?size=8&seed=3", "--policy", "random", "--samples", "2", "--out", str(tmp_path / "a"))
    assert first.returncode == 0, first.stderr
    again = nenyax("eval", "--config", str(tmp_path / "a" / "run.toml"), "--out", str(tmp_path / "b"))
    assert again.returncode == 0, again.stderr
    a, b = load_run(tmp_path / "a"), load_run(tmp_path / "b")
    assert a.config.settings == b.config.settings
    key = lambda t: (t.task_id, t.sample)  # noqa: E731
    assert [(key(t), t.seed, t.steps[0].action, t.score) for t in sorted(a.trajectories, key=key)] == [
        (key(t), t.seed, t.steps[0].action, t.score) for t in sorted(b.trajectories, key=key)
    ]


def test_precedence_option_over_environment_over_config_over_default(tmp_path):
    config = tmp_path / "c.toml"
    config.write_text(f'uri = "{URI}?size=4"\nsamples = 2\ntasks = 3\n[policy]\nuse = "reference"\n')

    def settings(name, *args, env=None):
        done = nenyax("eval", "--config", str(config), "--out", str(tmp_path / name), *args, env=env)
        assert done.returncode == 0, done.stderr
        return tomllib.loads((tmp_path / name / "run.toml").read_text())

    from_file = settings("file")
    assert (from_file["samples"], from_file["tasks"], from_file["concurrency"]) == (2, 3, 16)  # file, file, default
    from_env = settings("env", env={"NENYAX_SAMPLES": "3"})
    assert (from_env["samples"], from_env["tasks"]) == (3, 3)
    from_option = settings("option", "--samples", "4", env={"NENYAX_SAMPLES": "3"})
    assert from_option["samples"] == 4
    provider = settings(
        "provider", "--model", "local:smollm2-135m", "--tasks", "1", "--samples", "1", "--max-tokens", "4"
    )
    assert "policy" not in provider
    assert provider["provider"]["use"] == "local"


def test_a_config_with_a_secret_or_an_unknown_key_is_one_sentence(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(f'uri = "{URI}"\nbogus = 1\n')
    done = nenyax("eval", "--config", str(bad))
    assert done.returncode == 2
    assert "bogus" in done.stderr
    assert "Traceback" not in done.stderr
    secret = tmp_path / "secret.toml"
    secret.write_text(f'uri = "{URI}"\n[provider]\nuse = "openai"\nmodel = "m"\napi_key = "sk-live"\n')
    done = nenyax("eval", "--config", str(secret), "--out", str(tmp_path / "s"))
    assert done.returncode == 2
    assert "api_key" in done.stderr
    assert not (tmp_path / "s").exists()


def test_ctrl_c_names_the_resume_command_and_resume_finishes(tmp_path):
    run_dir, size = tmp_path / "r", 20000
    args = ["eval", f"{URI}?size={size}", "--policy", "reference", "--out", str(run_dir)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "nenyax.cli", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=foreground_sigint,  # a test run started in the background would pass SIGINT on ignored
    )
    jsonl = run_dir / "trajectories.jsonl"
    deadline = time.monotonic() + 300
    while not (jsonl.exists() and jsonl.stat().st_size > 100_000) and proc.poll() is None:
        assert time.monotonic() < deadline, "the run never started writing"
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    stderr = proc.communicate(timeout=120)[1].decode()
    assert proc.returncode != 0
    assert f"nenyax eval --resume {run_dir}" in stderr
    assert "Traceback" not in stderr
    assert 0 < len(pairs(run_dir)) < size
    assert nenyax("eval", "--resume", str(run_dir)).returncode == 0
    recorded = pairs(run_dir)
    assert len(recorded) == len(set(recorded)) == size


def test_backend_process_plays_reasoning_gym_the_same_on_two_workers(tmp_path):
    args = ("eval", f"{URI}?size=30", "--policy", "reference", "--samples", "2", "--json")
    here = nenyax(*args, "--out", str(tmp_path / "here"))
    there = nenyax(*args, "--out", str(tmp_path / "there"), "--backend", "process", "--workers", "2")
    assert here.returncode == 0, there.stderr
    assert there.returncode == 0, there.stderr

    def played(run_dir):
        return sorted((t.task_id, t.sample, t.seed, t.status.value, t.judgment) for t in load_run(run_dir).trajectories)

    assert played(tmp_path / "there") == played(tmp_path / "here")
    assert len(played(tmp_path / "here")) == 60
    assert {t.judgment.score for t in load_run(tmp_path / "there").trajectories} == {1.0}
    assert json.loads(there.stdout)["pass_at_k"] == json.loads(here.stdout)["pass_at_k"] == {"1": 1.0, "2": 1.0}
