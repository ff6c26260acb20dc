"""Progress is drawn for a person at a terminal and never into a pipe: checked under a real pseudo-terminal.

The environment is core's in-memory `arith` fake (nenyax-cli installs no real adapter); the embedded
model's loading spinner is checked in tests/test_embedded_model.py.
"""

import os
import subprocess
import sys

from nenyax_testsupport.terminal import run_in_terminal


def _env(site):
    env = {**os.environ, "PYTHONPATH": str(site), "NENYAX_STRICT_PLUGINS": "0", "TERM": "xterm", "COLUMNS": "120"}
    env.pop("NO_COLOR", None)
    return env


def in_terminal(site, *args):
    """Run the CLI with stdout and stderr on a pseudo-terminal; return everything it drew.

    Every command here succeeds (arith's reference is audited and plays every episode ok): exit 0.
    """
    code, drawn = run_in_terminal([sys.executable, "-m", "nenyax.cli", *args], _env(site))
    assert code == 0, drawn[-2000:]
    return drawn


def test_check_draws_a_progress_bar_at_a_terminal(site):
    from nenyax.core.tiers.measure import CHECKS

    drawn = in_terminal(site, "check", "arith:add", "--samples", "3")
    assert "checking" in drawn
    assert f"/{len(CHECKS)}" in drawn
    assert "Tier:" in drawn


def test_quiet_and_pipes_draw_no_progress(site):
    assert "checking" not in in_terminal(site, "check", "arith:add", "--samples", "3", "--quiet")
    piped = subprocess.run(
        [sys.executable, "-m", "nenyax.cli", "check", "arith:add", "--samples", "3"],
        capture_output=True,
        text=True,
        env=_env(site),
        timeout=300,
        check=False,
    )
    assert "Tier:" in piped.stdout
    assert "checking" not in piped.stdout + piped.stderr


def test_eval_draws_episode_progress_at_a_terminal(site, tmp_path):
    drawn = in_terminal(
        site, "eval", "arith:add", "--policy", "reference", "--tasks", "5", "--out", str(tmp_path / "r")
    )
    assert "episodes" in drawn
    assert "5/5" in drawn
    assert "ok 5" in drawn
    piped = subprocess.run(
        [
            sys.executable,
            "-m",
            "nenyax.cli",
            "eval",
            "arith:add",
            "--policy",
            "reference",
            "--tasks",
            "5",
            "--out",
            str(tmp_path / "p"),
        ],
        capture_output=True,
        text=True,
        env=_env(site),
        timeout=300,
        check=False,
    )
    assert piped.returncode == 0
    assert "5/5" not in piped.stderr + piped.stdout
