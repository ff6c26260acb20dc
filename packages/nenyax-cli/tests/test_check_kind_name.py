"""`nenyax check KIND NAME` is `nenyax KIND-check NAME`, while `nenyax check URI` keeps measuring tiers.

Real entry-point discovery in a subprocess, on core's `arith` fake written to disk as a distribution (conftest).
"""

import json
import os
import subprocess
import sys

import pytest


def nenyax(site, *args):
    path = os.pathsep.join([str(site), *([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])])
    env = {**os.environ, "PYTHONPATH": path, "NENYAX_STRICT_PLUGINS": "0"}
    return subprocess.run(
        [sys.executable, "-m", "nenyax.cli", *args], capture_output=True, text=True, env=env, timeout=300, check=False
    )


def verdicts(done):
    return [(c["id"], c["verdict"]) for c in json.loads(done.stdout)["checks"]]


def test_check_kind_name_runs_the_kinds_conformance_kit(site):
    alias = nenyax(site, "check", "adapter", "arith", "--json", "--strict")
    direct = nenyax(site, "adapter-check", "arith", "--json", "--strict")
    assert alias.returncode == direct.returncode == 0, alias.stderr
    assert verdicts(alias) == verdicts(direct)
    assert ("adapter/examples-reach-claimed-tier", "passed") in verdicts(alias)


def test_check_uri_still_measures_the_tier(site):
    done = nenyax(site, "check", "arith:add?size=4", "--json", "--samples", "2")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["tier"] == "audited"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["check", "adaptr", "arith"], "'adaptr' is no plugin kind. Did you mean 'adapter'?"),
        (["check", "adapter"], "Name the adapter to check, e.g. `nenyax check adapter NAME`"),
        (["check", "adapter", "arth"], "No adapter named 'arth' is installed. Did you mean 'arith'?"),
        (["check", "adapter", "arith", "--samples", "3"], "which takes no --samples"),
        (["check", "arith:add", "--strict"], "--strict can only be given with a plugin kind and a name"),
    ],
)
def test_mistakes_are_one_sentence_and_exit_2(site, args, said):
    done = nenyax(site, *args)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert said in done.stderr


def test_both_commands_print_the_one_report_record_with_the_same_result_keys(site):
    """The kit's JSON is the report as serde writes it (as the tier's is), its older keys kept beside it."""
    from nenyax.core import serde
    from nenyax.testing import KitReport

    kit = json.loads(nenyax(site, "adapter-check", "arith", "--json").stdout)
    tier = json.loads(nenyax(site, "check", "arith:add?size=4", "--json", "--samples", "2").stdout)
    keys = {"id", "outcome", "evidence", "findings", "seconds"}
    assert all(set(r) >= keys for r in (*kit["results"], *tier["results"]))
    assert set(tier["results"][0]) - set(kit["results"][0]) == {"tier", "openenv"}  # the tier specialisation
    # The older keys say what the record says, check by check.
    assert [(c["id"], c["verdict"], c["reason"]) for c in kit["checks"]] == [
        (r["id"], r["outcome"], r["evidence"]) for r in kit["results"]
    ]
    report = serde.from_data({k: v for k, v in kit.items() if k not in ("passed", "checks")}, KitReport)
    assert (report.kind, report.name, report.passed()) == ("adapter", "arith", kit["passed"])
