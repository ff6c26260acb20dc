"""`nenyax check` and `nenyax try` as a user runs them: tiers, the embedded model through hud's agent, quiet output."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import ARITHMETIC, HAIKU

from nenyax.core.toolkit.cache import cache_root

pytestmark = pytest.mark.hud

NENYAX = [sys.executable, "-c", "from nenyax.cli.main import run; run()"]


def _nenyax(*args, home=None, extra_env=None):
    env = {**os.environ, **(extra_env or {})}
    if home is not None:
        # A fresh home, but the machine's model cache: in a fresh one the GGUF is converted again (40 s).
        env.update(HOME=str(home), NENYAX_CACHE_DIR=str(cache_root()))
    return subprocess.run([*NENYAX, *args], capture_output=True, text=True, timeout=280, env=env, check=False)


def _quiet(stderr):
    """No traceback from hud (its shutdown CancelledError, its logged rollout failures) reaches the user."""
    assert "Traceback" not in stderr, stderr
    assert "CancelledError" not in stderr, stderr


def test_the_haiku_example_has_no_reference_and_stops_at_trainable(tmp_path):
    done = _nenyax("check", HAIKU, "--json", "--samples", "3", home=tmp_path)
    report = json.loads(done.stdout)
    assert report["tier"] == "trainable", report
    audited = [r for r in report["results"] if r["id"].startswith("audited/")]
    assert audited
    assert all(r["outcome"] == "skipped" for r in audited)
    assert all("reference_policy" in r["evidence"] for r in audited)  # why it stops there
    _quiet(done.stderr)


def test_nothing_is_sent_or_written_for_hud_even_with_a_key(tmp_path):
    # A key in the environment would make hud report jobs and traces to its platform; the adapter drops it.
    code = (
        "from nenyax.core import load\n"
        "traj = load('hud:nenyax.adapters.hud.example:arithmetic').rollout('reference')\n"
        "from hud.settings import settings\n"
        "print(traj.status.value, settings.api_key, settings.telemetry_enabled)\n"
    )
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "NENYAX_CACHE_DIR": str(cache_root()),
        "HUD_API_KEY": "sk-hud-would-report",
    }
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env, check=True
    )
    assert done.stdout.split() == ["ok", "None", "False"]
    assert not (Path(tmp_path) / ".hud").exists()  # no span files either
    _quiet(done.stderr)


@pytest.mark.model
def test_the_embedded_model_plays_through_hud_with_token_ids(tmp_path):
    done = _nenyax("try", HAIKU, "-m", "local:smollm2-135m", "--max-tokens", "32", "--json")
    assert done.returncode == 0, done.stderr
    traj = json.loads(done.stdout)
    assert traj["status"] == "ok", traj["error"]
    assert 0.0 <= traj["judgment"]["score"] <= 1.0
    call = traj["model_calls"][0]
    assert call["provider"] == "local"
    assert call["prompt_token_ids"]
    assert call["completion_token_ids"]
    assert len(call["completion_token_ids"]) <= 32
    _quiet(done.stderr)


@pytest.mark.model
def test_the_arithmetic_example_is_audited_and_the_embedded_model_plays_it():
    done = _nenyax("check", ARITHMETIC, "--json", "--samples", "4", "-m", "local:smollm2-135m")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["tier"] == "audited", report
    fidelity = [r for r in report["model_results"] if r["id"] == "trainable/token-fidelity"]
    assert [r["outcome"] for r in fidelity] == ["passed"], fidelity  # the model played an episode, tokens recorded
    _quiet(done.stderr)
