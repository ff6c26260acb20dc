"""Discovery of the installed first-party plugins, and a broken plugin that must not stop them."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from nenyax_testsupport.distributions import write_distribution


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
    assert done.returncode == 0
    assert json.loads(done.stdout)["tier"] == "audited"


def test_check_basic_arithmetic_is_audited():
    done = nenyax("check", "reasoning_gym:basic_arithmetic", strict="1")
    assert done.returncode == 0, done.stderr
    assert "Tier: audited" in done.stdout


REQUIRED_OPTIONS = {
    ("provider", "openai"): {"api_key": "unused"},
    ("learner", "tinker"): {"model": "Qwen/Qwen3-8B"},
    ("judge", "llm"): {"rubric": "The answer is correct."},
    ("judge", "llm-group"): {"rubric": "The answer is correct."},
}


def test_every_installed_first_party_plugin_passes_the_common_checks_of_its_kind(monkeypatch):
    """One factory convention for every kind: each plugin of every distribution in packages/ follows it."""
    from nenyax.core.plugins.registry import default_registry
    from nenyax.testing import Report, Subject, Verdict, common_checks

    # Keys the learner and tracer presets read when built; the hosts point at loopback so nothing leaves.
    for variable in ("TINKER_API_KEY", "LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "WANDB_API_KEY"):
        monkeypatch.setenv(variable, "unused")
    monkeypatch.setenv("WANDB_ENTITY", "nenyax")
    monkeypatch.setenv("WANDB_PROJECT", "conformance")
    monkeypatch.setenv("LANGFUSE_HOST", "http://127.0.0.1:9")
    monkeypatch.setenv("WANDB_BASE_URL", "http://127.0.0.1:9")
    entries = [e for e in default_registry().all_entries() if (e.distribution or "").startswith("nenyax-")]
    assert {e.spec.kind for e in entries} >= {"adapter", "provider", "judge"}
    for entry in entries:
        kind, name = entry.spec.kind, entry.spec.name
        # `registration-is-lazy` runs every plugin's discovery in a fresh interpreter: checked per kit elsewhere.
        checks = [c for c in common_checks(kind) if not c.id.endswith("/registration-is-lazy")]
        # The factory-returns check builds the plugin: a few need what a user must give them to start
        # (a key, a base model); building sends nothing, so placeholders do.
        options = REQUIRED_OPTIONS.get((kind, name), {})
        report = Report.of(checks, Subject.from_environment(kind, name, options=options))
        verdicts = {o.check.id: (o.verdict, o.reason, [f.message for f in o.findings]) for o in report.outcomes}
        assert all(o.verdict is Verdict.PASSED for o in report.outcomes), (kind, name, verdicts)


# Core's own plugins run their whole kit in core's tests, in-process (test_<kind>_kit.py), not by a subclass.
KIT_RUN_IN_CORE = {
    ("provider", "openai"),
    ("judge", "return"),
    ("judge", "llm"),
    ("judge", "llm-group"),
    ("learner", "incontext"),
    ("exporter", "jsonl"),
}


def _plugins_named_by_kit_runs(tests: Path) -> set[str]:
    """Plugin names a distribution's tests run their kind's whole kit on: a conformance subclass's ``plugin = "x"``,
    or an exporter's tests parametrised over `CHECKS` with that exporter."""
    named: set[str] = set()
    for path in tests.rglob("*.py"):
        text = path.read_text()
        named.update(re.findall(r'^\s+plugin = "([^"]+)"', text, flags=re.M))
        if 'CHECKS["exporter"]' in text:
            named.update(re.findall(r'Subject\.from_(?:environment|registry)\("exporter", "([^"]+)"', text))
    return named


def test_every_first_party_plugin_runs_its_kinds_whole_kit_in_its_own_tests():
    """The common checks run above; each kind's own checks run in the tests of the distribution that ships the plugin
    (CI runs every one), so a plugin added without its kit run fails here, by name."""
    from nenyax.core.plugins.registry import default_registry

    packages = Path(__file__).parents[1] / "packages"
    missing = []
    for entry in default_registry().all_entries():
        distribution, kind, name = entry.distribution or "", entry.spec.kind, entry.spec.name
        if not distribution.startswith("nenyax-") or (kind, name) in KIT_RUN_IN_CORE:
            continue
        if name not in _plugins_named_by_kit_runs(packages / distribution / "tests"):
            missing.append(f"{kind} {name} ({distribution})")
    assert not missing, f"No kit run in its own tests: {', '.join(missing)}"
