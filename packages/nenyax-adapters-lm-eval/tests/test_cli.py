"""`nenyax check` and `nenyax try` as a user runs them: lm-eval's progress bars stay off stderr, its warnings do not."""

import os
import subprocess
import sys

import pytest
from support import task_uri

from nenyax.core.toolkit.cache import cache_root

pytestmark = pytest.mark.lm_eval

NENYAX = [sys.executable, "-c", "from nenyax.cli.main import run; run()"]


def _nenyax(tmp_path, *args):
    # A fresh home and datasets cache: `datasets` generates the split (and would draw its bar) on first load.
    # The model cache stays the machine's: in a fresh one the embedded model's GGUF is converted again (40 s).
    env = {**os.environ, "HOME": str(tmp_path), "HF_HOME": str(tmp_path / "hf"), "NENYAX_CACHE_DIR": str(cache_root())}
    env.pop("HF_DATASETS_DISABLE_PROGRESS_BARS", None)
    return subprocess.run([*NENYAX, *args], capture_output=True, text=True, timeout=280, env=env, check=False)


def test_check_prints_no_progress_bar(tmp_path):
    done = _nenyax(tmp_path, "check", "lm_eval:nenyax_capitals")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Tier: audited" in done.stdout
    assert "it/s" not in done.stderr, done.stderr
    assert "examples/s" not in done.stderr, done.stderr
    assert len(done.stderr.splitlines()) <= 2, done.stderr  # the CLI's own notes only (the sample count)


def test_try_prints_no_progress_bar(tmp_path):
    done = _nenyax(tmp_path, "try", "lm_eval:nenyax_arith", "--max-tokens", "16")  # the bars are not the model's
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == "", done.stderr


def test_lm_evals_own_warnings_still_reach_the_user(tmp_path):
    # The crash task declares a metric without its aggregation: lm-eval warns, and the user sees it.
    done = _nenyax(tmp_path, "try", task_uri("crash"), "--task", "crash_task/0", "--max-tokens", "16")
    assert "aggregation is not" in done.stderr, done.stderr
    assert "it/s" not in done.stderr, done.stderr
