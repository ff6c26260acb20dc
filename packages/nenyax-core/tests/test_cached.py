"""The tier cache behind `nenyax list`'s tier column, and the user cache folder it lives in."""

import json

import attrs
import pytest

from nenyax.core.contract.trajectory import Tier
from nenyax.core.engine.cache import cache_root
from nenyax.core.engine.rundirs import nenyax_versions
from nenyax.core.plugins.registry import Registry
from nenyax.core.tiers.cached import checks_dir, recall, remember
from nenyax.core.tiers.measure import check
from nenyax_testsupport.fakes import AdapterPlugin


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.delenv("NENYAX_CHECKS_DIR", raising=False)  # nox points it at a session folder
    monkeypatch.setenv("NENYAX_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture(scope="module")
def report():
    registry = Registry.from_plugins(("fake", AdapterPlugin(factory="nenyax_testsupport.fakes:ArithAdapter")))
    return check("arith:add?size=4", registry=registry)


def test_cache_root_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv("NENYAX_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_root() == tmp_path / "home" / ".cache" / "nenyax"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "nenyax"
    monkeypatch.setenv("NENYAX_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_root() == tmp_path / "mine"


def test_a_remembered_tier_is_recalled_under_the_canonical_uri(cache, report):
    assert recall(report.manifest.uri) is None
    path = remember(report)
    assert path is not None
    assert path.parent == cache / "checks"
    cached = recall(report.manifest.uri)
    assert cached is not None
    assert cached.tier is report.tier is Tier.AUDITED
    assert cached.samples == report.samples == 4
    assert cached.current is True


def test_a_tier_measured_by_other_versions_is_stale(cache, report):
    remember(report)
    other = {**nenyax_versions(), "nenyax-core": "0.0.1-other"}
    assert recall(report.manifest.uri, versions=other).current is False


def test_installing_an_unrelated_distribution_leaves_a_tier_current(cache, report):
    remember(report)
    added = {**nenyax_versions(), "nenyax-adapters-unrelated": "9.9"}
    assert recall(report.manifest.uri, versions=added).current is True
    record = json.loads(next((cache / "checks").glob("*.json")).read_text())
    assert set(record["versions"]) == {"nenyax-core"}  # what measured it: core (this fake has no distribution)
    gone = {k: v for k, v in nenyax_versions().items() if k != "nenyax-core"}
    assert recall(report.manifest.uri, versions=gone).current is False


def test_an_environment_that_did_not_load_forgets_what_was_kept(cache, report):
    remember(report)
    assert recall(report.manifest.uri) is not None
    assert remember(attrs.evolve(report, manifest=None, uri=report.manifest.uri)) is None
    assert recall(report.manifest.uri) is None


def test_a_check_weaker_than_the_default_is_not_kept(cache, report):
    assert remember(report, samples=5) is None
    assert remember(report, margin=0.0) is None
    assert recall(report.manifest.uri) is None
    assert remember(report, samples=50, margin=0.5) is not None  # stricter is kept


def test_the_checks_folder_can_be_named_on_its_own(cache, tmp_path, monkeypatch):
    assert checks_dir() == cache / "checks"
    monkeypatch.setenv("NENYAX_CHECKS_DIR", str(tmp_path / "elsewhere"))
    assert checks_dir() == tmp_path / "elsewhere"


def test_a_damaged_record_reads_as_none_and_an_unwritable_cache_costs_nothing(cache, report, tmp_path, monkeypatch):
    path = remember(report)
    path.write_text("{not json")
    assert recall(report.manifest.uri) is None
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("NENYAX_CACHE_DIR", str(blocker))
    assert remember(report) is None  # the check's result still stands; the listing just lacks it


def test_the_record_holds_what_the_check_measured_and_how(cache, report):
    import json
    import re

    from nenyax.core.contract import serde

    measured = attrs.evolve(report, seed=7)
    path = remember(measured, samples=30, margin=0.45)
    record = json.loads(path.read_text())
    assert record["uri"] == report.manifest.uri == "arith:add?size=4"
    assert record["tier"] == "audited"
    assert (record["samples"], record["seed"], record["margin"]) == (4, 7, 0.45)  # samples: as sampled, not asked
    assert record["manifest_digest"] == serde.digest(report.manifest)
    assert record["versions"] == {"nenyax-core": nenyax_versions()["nenyax-core"]}  # what measured it
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", record["checked"])
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no partial file left beside it
    cached = recall(report.manifest.uri)
    assert (cached.uri, cached.seed, cached.checked, cached.current) == (record["uri"], 7, record["checked"], True)
    assert recall("arith:add?size=5") is None  # another URI has its own record


def test_forget_drops_one_record_and_a_missing_one_is_no_error(cache, report):
    from nenyax.core.tiers.cached import forget

    forget("arith:never-checked")  # nothing kept, nothing to say
    remember(report)
    forget("arith:add?size=5")
    assert recall(report.manifest.uri) is not None
    forget(report.manifest.uri)
    assert recall(report.manifest.uri) is None


def test_a_second_check_of_the_same_environment_replaces_its_record(cache, report):
    first = remember(report)
    again = remember(attrs.evolve(report, seed=9))
    assert again == first
    assert recall(report.manifest.uri).seed == 9
