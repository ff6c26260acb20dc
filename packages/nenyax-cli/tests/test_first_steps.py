"""What a new user meets first: the server `serve` needs, what a tier means, `list`'s columns, a '-' scheme.

The adapters are core's fakes in distributions written to disk (see test_cli.py); the server
distribution is a metadata-only stand-in, since nenyax-cli's tests install no real one.
"""

import json
import os
import subprocess
import sys

import pytest

from nenyax.cli.tier_meanings import NEEDS, PROMISES
from nenyax.core.contract.trajectory import Tier
from nenyax_testsupport.distributions import write_distribution

PLUGIN = """
from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_adapters():
    return PluginSpec(kind="adapter", name="arith", factory="{factory}", summary="fake arithmetic")
"""

LISTER = """
from nenyax.core.plugins.adapter import Listing
from nenyax_testsupport.fakes import ListingArithAdapter


class TwoListings(ListingArithAdapter):
    def listing(self, where=None):
        return [
            Listing(uri="arith:add?size=3", description="additions"),
            Listing(uri="arith:gone", description="an old one", unavailable="it needs a library no longer made"),
        ]
"""


def _site(tmp_path, factory, modules=None):
    modules = {"nenyax_arith_plugin": PLUGIN.format(factory=factory), **(modules or {})}
    return write_distribution(tmp_path / "site", "nenyax-arith", "1.2.0", {"arith": "nenyax_arith_plugin"}, modules)


def nenyax(*args, sites=()):
    paths = [str(s) for s in sites] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "NENYAX_STRICT_PLUGINS": "0", "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "nenyax.cli", *args], capture_output=True, text=True, env=env, timeout=300, check=False
    )


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    # Tiers measured by other tests on this machine would add a tier column to `list`'s table.
    monkeypatch.setenv("NENYAX_CHECKS_DIR", str(tmp_path / "checks"))


@pytest.fixture
def server_site(tmp_path):
    # Version 9.9.9 tells this stand-in apart from a real nenyax-server-openenv installed beside it.
    server = {"openenv": "nenyax.server.openenv:serve"}
    return write_distribution(tmp_path / "server", "nenyax-server-openenv", "9.9.9", server, group="nenyax.servers")


def test_version_and_plugins_name_the_server_that_serve_needs(tmp_path, server_site):
    site = _site(tmp_path, "nenyax_testsupport.fakes:ArithAdapter")
    version = nenyax("--version", sites=[server_site, site])
    assert version.returncode == 0, version.stderr
    assert "nenyax-server-openenv 9.9.9" in version.stdout.splitlines()
    data = json.loads(nenyax("plugins", "--json", sites=[server_site, site]).stdout)
    assert data["servers"] == [
        {"name": "openenv", "distribution": "nenyax-server-openenv", "version": "9.9.9", "used_by": "nenyax serve"}
    ]
    human = nenyax("plugins", sites=[server_site, site])
    assert human.returncode == 0, human.stderr
    [row] = [line for line in human.stdout.splitlines() if "nenyax-server-openenv" in line]
    assert "server" in row
    assert "9.9.9" in row


def test_check_says_what_the_tier_reached_promises_and_what_the_next_one_needs(tmp_path):
    audited = nenyax(
        "check", "arith:add?size=20", sites=[_site(tmp_path / "a", "nenyax_testsupport.fakes:ArithAdapter")]
    )
    assert audited.returncode == 0, audited.stderr
    flat = " ".join(audited.stdout.split())
    assert f"Tier: audited {PROMISES[Tier.AUDITED]}" in flat
    assert "Next:" not in flat  # nothing is above audited
    site = _site(tmp_path / "t", "nenyax_testsupport.fakes:WrongReferenceAdapter")
    trainable = nenyax("check", "arith:add", sites=[site])
    assert trainable.returncode == 1  # a failed audited check
    flat = " ".join(trainable.stdout.split())
    assert f"Tier: trainable {PROMISES[Tier.TRAINABLE]}" in flat
    assert f"Next: audited needs {NEEDS[Tier.AUDITED]}" in flat
    assert "reference" in NEEDS[Tier.AUDITED]


def test_every_tier_has_a_promise_and_every_tier_above_none_a_need():
    assert set(PROMISES) == set(Tier)
    assert set(NEEDS) == set(Tier) - {Tier.NONE}
    assert all(text.endswith(".") for text in [*PROMISES.values(), *NEEDS.values()])


def test_list_has_column_headers_and_marks_what_cannot_load(tmp_path):
    site = _site(tmp_path, "nenyax_arith_lister:TwoListings", {"nenyax_arith_lister": LISTER})
    done = nenyax("list", "arith", sites=[site])
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    header = lines[lines.index("arith: 2 environment(s), 1 of which cannot load here") + 1].split()
    assert header == ["uri", "description"]
    [gone] = [line for line in lines if "arith:gone" in line]
    assert "cannot load: it needs a library no longer made" in gone
    [add] = [line for line in lines if "arith:add" in line]
    assert "cannot load" not in add
    data = json.loads(nenyax("list", "arith", "--json", sites=[site]).stdout)
    assert [i["unavailable"] for i in data["arith"]] == [None, "it needs a library no longer made"]


@pytest.mark.parametrize("uri", ["reasoning-gym:basic_arithmetic", "reasoning.gym:basic_arithmetic"])
def test_a_scheme_spelled_with_a_hyphen_or_dot_gets_the_underscore_spelling(tmp_path, uri):
    done = nenyax("check", uri, sites=[_site(tmp_path, "nenyax_testsupport.fakes:ArithAdapter")])
    assert done.returncode == 2
    assert "Did you mean 'reasoning_gym'" in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
