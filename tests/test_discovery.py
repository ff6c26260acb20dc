"""Discovery of the installed first-party plugins, and a broken plugin that must not stop them."""

import json
import os
import subprocess
import sys

from nenyax.testing.distributions import write_distribution


def nenyax(*args, extra_path=None, strict="0"):
    env = {**os.environ, "NENYAX_STRICT_PLUGINS": strict}
    if extra_path:
        env["PYTHONPATH"] = str(extra_path)
    return subprocess.run(
        [sys.executable, "-m", "nenyax.cli", *args], capture_output=True, text=True, env=env, timeout=300, check=False
    )


def test_plugins_lists_reasoning_gym_with_its_distribution():
    done = nenyax("plugins", "--json", strict="1")
    assert done.returncode == 0, done.stderr
    rows = {(p["kind"], p["name"]): p for p in json.loads(done.stdout)["plugins"]}
    assert rows[("adapter", "reasoning_gym")]["distribution"] == "nenyax-adapters-reasoning-gym"


def test_a_broken_plugin_is_reported_and_reasoning_gym_still_works(tmp_path):
    broken = write_distribution(
        tmp_path,
        "nenyax-broken",
        "0.1.0",
        {"broken": "nenyax_broken"},
        {"nenyax_broken": "import this_dependency_is_not_installed\n"},
    )
    listed = json.loads(nenyax("plugins", "--json", extra_path=broken).stdout)
    assert [f["plugin"] for f in listed["failures"]] == ["broken"]
    assert "this_dependency_is_not_installed" in listed["failures"][0]["error"]
    done = nenyax("check", "reasoning_gym:basic_arithmetic?size=20", "--json", extra_path=broken)
    assert done.returncode == 0 and json.loads(done.stdout)["tier"] == "audited"


def test_check_basic_arithmetic_is_audited():
    done = nenyax("check", "reasoning_gym:basic_arithmetic", strict="1")
    assert done.returncode == 0, done.stderr
    assert "Tier: audited" in done.stdout
