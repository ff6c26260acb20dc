"""The CLI against real entry-point discovery: fake distributions written to disk, run in a subprocess.

The adapters are core's in-memory fakes (`nenyax_testsupport.fakes`): nenyax-cli's tests install no real
adapter, since the CLI depends on core alone; tests/ runs the CLI on the real adapters.
"""

import json
import os
import subprocess
import sys

import pytest

from nenyax.core.tiers.measure import CHECKS
from nenyax_testsupport.distributions import write_distribution

# The shape of a real plugin module: declarations only, the implementation named by a lazy string.
GOOD = """
from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_adapters():
    return PluginSpec(kind="adapter", name="arith", factory="{factory}", summary="fake arithmetic")
"""


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "site"
    write_distribution(
        root,
        "nenyax-arith",
        "1.2.0",
        {"arith": "nenyax_arith_plugin"},
        {"nenyax_arith_plugin": GOOD.format(factory="nenyax_testsupport.fakes:ArithAdapter")},
    )
    return root


def nenyax(site, *args, strict=False, extra_site=None):
    paths = [str(site)] + ([str(extra_site)] if extra_site else [])
    paths += [os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else []  # a checkout's sources stay first
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "NENYAX_STRICT_PLUGINS": "1" if strict else "0"}
    env.pop("NO_COLOR", None)
    return subprocess.run(
        [sys.executable, "-m", "nenyax.cli", *args], capture_output=True, text=True, env=env, timeout=300, check=False
    )


def test_version(site):
    done = nenyax(site, "--version")
    assert done.returncode == 0
    assert "0.1.0" in done.stdout


def test_help_imports_no_command_or_plugin_implementation():
    probe = (
        "import sys\nfrom nenyax.cli.main import cli\n"
        "try:\n    cli(['--help'])\nexcept SystemExit:\n    pass\n"
        "print('LOADED', sorted(m for m in sys.modules if m.startswith(('nenyax', 'rich', 'reasoning_gym'))))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = done.stdout.split("LOADED", 1)[1]
    assert "check" in done.stdout.split("LOADED")[0]  # the help lists the command...
    for heavy in ("nenyax.cli.commands", "rich", "reasoning_gym", "nenyax.adapters", "nenyax.testing"):
        assert heavy not in loaded  # ...without importing it


def test_plugins_json_lists_distribution_and_reports_a_broken_plugin(site, tmp_path):
    broken = write_distribution(
        tmp_path / "broken",
        "nenyax-broken",
        "0.0.1",
        {"broken": "nenyax_broken_plugin"},
        {"nenyax_broken_plugin": "raise ImportError('this plugin is broken on purpose')\n"},
    )
    done = nenyax(site, "plugins", "--json", extra_site=broken)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    [arith] = [p for p in data["plugins"] if p["name"] == "arith"]
    assert (arith["kind"], arith["distribution"], arith["version"]) == ("adapter", "nenyax-arith", "1.2.0")
    [failure] = [f for f in data["failures"] if f["plugin"] == "broken"]
    assert failure["distribution"] == "nenyax-broken"
    assert "broken on purpose" in failure["error"]
    human = nenyax(site, "plugins", extra_site=broken)
    assert "arith" in human.stdout
    assert "failed to load" in human.stdout


def test_strict_mode_makes_a_broken_plugin_an_error(site, tmp_path):
    broken = write_distribution(
        tmp_path / "broken",
        "nenyax-broken",
        "0.0.1",
        {"broken": "nenyax_broken_plugin"},
        {"nenyax_broken_plugin": "raise ImportError('broken')\n"},
    )
    done = nenyax(site, "plugins", strict=True, extra_site=broken)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "'broken' from nenyax-broken failed to load" in done.stderr


def test_check_json_reports_tier_and_every_check(site):
    done = nenyax(site, "check", "arith:add?size=6", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["tier"] == "audited"
    # Every check core runs, in its order, each passed (the list comes from core, not a count kept here).
    assert [(r["id"], r["tier"], r["outcome"]) for r in report["results"]] == [
        (c.id, c.tier.label, "passed") for c in CHECKS
    ]
    assert all(r["evidence"] and r["seconds"] > 0 for r in report["results"])


def test_check_table(site):
    done = nenyax(site, "check", "arith:add?size=6")
    assert done.returncode == 0
    assert "Tier: audited" in done.stdout
    assert "audited/reference-beats-null" in done.stdout


def test_require_a_tier_that_is_not_reached(tmp_path):
    site = write_distribution(
        tmp_path / "s",
        "nenyax-arith",
        "1.0",
        {"arith": "nenyax_arith_plugin"},
        {"nenyax_arith_plugin": GOOD.format(factory="nenyax_testsupport.fakes:WrongReferenceAdapter")},
    )
    done = nenyax(site, "check", "arith:add", "--require", "audited")
    assert done.returncode == 1
    assert "Tier: trainable" in done.stdout
    assert nenyax(site, "check", "arith:add", "--require", "trainable").returncode == 0


def test_a_failed_check_is_said_beside_the_tier_not_left_among_passed_rows(tmp_path):
    site = write_distribution(
        tmp_path / "s",
        "nenyax-arith",
        "1.0",
        {"arith": "nenyax_arith_plugin"},
        {"nenyax_arith_plugin": GOOD.format(factory="nenyax_testsupport.fakes:NegativeSplitAdapter")},
    )
    done = nenyax(site, "check", "arith:add?size=6")
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    tier = next(i for i, line in enumerate(lines) if line.startswith("Tier: "))
    assert lines[tier] == "Tier: none (not even connectable)"
    # Every row after the failed one passed (the audit among them): the failure is said again after the table.
    table_end = max(i for i, line in enumerate(lines) if "audited/reference-beats-floor" in line)
    said = [line for line in lines[table_end + 1 : tier] if line.startswith("Failed: ")]
    assert said == ["Failed: connectable/manifest-valid: Split 'all' has a negative task count."]


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["check", "arith:nope"], "there is no 'nope'"),
        (["check", "arth:add"], "Did you mean 'arith'"),
        (["check", "no-scheme"], "is not an environment URI"),
        (["check", "arith:add", "--samples", "0"], "is not in the range"),
        (["check", "arith:add", "--samples", "abc"], "is not a valid integer"),
        (["try", "arith:add", "--seed", "99999999999999999999999"], "is not in the range"),
        (["plugins", "extra"], "unexpected extra argument"),
        (["adapter-check", "arth"], "Did you mean 'arith'"),
        (["judge-check", "retrun"], "Did you mean 'return'"),
        (["provider-check", "openai", "--option", "base_url"], "Write --option as KEY=VALUE"),
    ],
)
def test_user_mistakes_get_one_sentence_and_exit_2(site, args, fragment):
    done = nenyax(site, *args)
    assert done.returncode == 2
    assert fragment in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_adapter_check_passes_on_a_sound_adapter_and_fails_on_a_broken_one(site, tmp_path):
    done = nenyax(site, "adapter-check", "arith", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["passed"] is True
    broken = write_distribution(
        tmp_path / "b",
        "nenyax-arith",
        "1.0",
        {"arith": "nenyax_arith_plugin"},
        {"nenyax_arith_plugin": GOOD.format(factory="nenyax_testsupport.fakes:CrashOnBadURIAdapter")},
    )
    done = nenyax(broken, "adapter-check", "arith", "--json")
    assert done.returncode == 1
    checks = {c["id"]: c for c in json.loads(done.stdout)["checks"]}
    assert [cid for cid, c in checks.items() if not c["passed"]] == ["adapter/bad-uri-is-clear"]
    assert checks["adapter/bad-uri-is-clear"]["verdict"] == "failed"
    # A check the adapter's capabilities do not call for is skipped, saying why (and does not fail the run).
    listing = checks["adapter/listing-is-loadable"]
    assert listing["verdict"] == "skipped"
    assert listing["reason"] == "the adapter does not declare 'listing'"


def test_a_kind_check_command_exists_for_each_kind_with_a_kit_and_only_those(monkeypatch):
    import dataclasses

    from nenyax.cli import main
    from nenyax.cli.commands import conformance
    from nenyax.core.kinds import KINDS

    kits = {k.check_command for k in KINDS.values() if k.kit}
    assert kits == {
        "adapter-check",
        "provider-check",
        "judge-check",
        "sandbox-check",
        "learner-check",
        "exporter-check",
        "tracer-check",
    }
    assert {name for name in main.COMMANDS if name.endswith("-check")} == kits
    assert conformance.adapter_check_command.name == "adapter-check"
    # Take a kind's kit out of the table and its command goes; give it one and the command follows.
    monkeypatch.setitem(conformance.KINDS, "judge", dataclasses.replace(KINDS["judge"], kit=None))
    monkeypatch.delitem(vars(conformance), "judge_check_command", raising=False)
    with pytest.raises(AttributeError):
        conformance.judge_check_command  # noqa: B018 - no kit, no command
    monkeypatch.setitem(conformance.KINDS, "judge", dataclasses.replace(KINDS["judge"], kit="x:Y"))
    monkeypatch.delitem(vars(conformance), "judge_check_command", raising=False)
    command = conformance.judge_check_command
    assert command.name == "judge-check"
    assert "installed judge" in (command.help or "")
    # `nenyax <kind>-check` for a kind without a kit says so (every kind has one now: shown with one taken out).
    monkeypatch.setitem(main.KINDS, "judge", dataclasses.replace(KINDS["judge"], kit=None))
    said = main._no_kit("judge-check") or ""
    assert said.startswith("There is no conformance kit for judge plugins yet, so no `nenyax judge-check`")
    assert main._no_kit("adapter-check") is None


def test_judge_check_passes_core_s_return_judge(site):
    done = nenyax(site, "judge-check", "return", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    checks = {c["id"]: c for c in json.loads(done.stdout)["checks"]}
    assert checks["judge/bad-reference-is-clear"]["verdict"] == "passed"
    assert checks["judge/right-beats-wrong"]["reason"] == "the judge does not declare 'answer'"


def test_provider_check_takes_the_options_a_provider_needs(site, monkeypatch):
    from nenyax.testing.model_server import ScriptedModelServer, serving_in_thread

    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "NENYAX_MODEL"):
        monkeypatch.delenv(name, raising=False)
    with serving_in_thread(ScriptedModelServer(lambda messages: "hello")) as server:
        done = nenyax(site, "provider-check", "openai", "--option", f"base_url={server.base_url}", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    checks = {c["id"]: c for c in json.loads(done.stdout)["checks"]}
    assert checks["provider/completes-a-chat"]["verdict"] == "passed"
    assert server.requests == 2  # the kit really asked it (a call and a stream)
    # Without them the outcome is said, not a traceback: OpenAI's own API needs a key.
    done = nenyax(site, "provider-check", "openai", "--json")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    checks = {c["id"]: c for c in json.loads(done.stdout)["checks"]}
    assert "No API key for https://api.openai.com/v1" in checks["provider/factory-returns-provider"]["reason"]


def test_learner_check_trains_saves_and_restores_core_s_incontext_learner(site):
    done = nenyax(site, "learner-check", "incontext", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    checks = {c["id"]: c for c in json.loads(done.stdout)["checks"]}
    for check_id in ("learner/update-returns-metrics", "learner/restore-goes-back", "learner/bad-revision-is-refused"):
        assert checks[check_id]["verdict"] == "passed"


def test_more_samples_than_tasks_is_said_and_reported(site):
    done = nenyax(site, "check", "arith:add?size=3", "--samples", "50", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["samples"] == 3
    assert "Note: --samples 50 is more than the environment's 3 task(s); all 3 were sampled." in done.stderr
