"""The registry with in-memory plugin objects, the way an entry-point module would register.

Core's tests install no plugin distribution (each depends on core), and none is broken in the ways
these tests need (a misspelled hook, a hook that raises, a spec of the wrong kind), so the plugins
are built here; tests/test_discovery.py runs discovery over the installed distributions.
"""

import sys

import pytest

from nenyax.core.engine.loader import load
from nenyax.core.errors import DuplicatePluginError, ManifestError, PluginLoadError, UnknownPluginError, UsageError
from nenyax.core.hookspecs import PluginSpec, hookimpl
from nenyax.core.plugins.registry import Registry
from nenyax_testsupport.fakes import AdapterPlugin, ArithAdapter, KindPlugin


def test_lookup_and_create():
    registry = Registry.from_plugins(("fake", AdapterPlugin()))
    assert registry.names("adapter") == ["arith"]
    assert registry.names("sandbox") == []
    assert isinstance(registry.create("adapter", "arith"), ArithAdapter)


def test_unknown_name_suggests_close_ones():
    registry = Registry.from_plugins(("fake", AdapterPlugin()))
    with pytest.raises(UnknownPluginError, match="Did you mean 'arith'"):
        registry.get("adapter", "arth")
    with pytest.raises(UnknownPluginError, match="Did you mean 'adapter'"):
        registry.get("adaptor", "arith")


def test_duplicate_names_name_both_distributions(monkeypatch):
    monkeypatch.delenv("NENYAX_STRICT_PLUGINS", raising=False)
    sources = [("one", AdapterPlugin(), "nenyax-one", "1.0"), ("two", AdapterPlugin(), "nenyax-two", "2.0")]
    registry = Registry(sources)
    assert registry.names("adapter") == ["arith"]  # still listed, so `nenyax plugins` can show it
    with pytest.raises(DuplicatePluginError) as info:
        registry.get("adapter", "arith")  # but refused on use
    message = str(info.value)
    assert "nenyax-one 1.0" in message
    assert "nenyax-two 2.0" in message
    assert "NENYAX_DISABLE_PLUGINS=two" in message
    assert [f.plugin for f in registry.failures] == ["two"]
    monkeypatch.setenv("NENYAX_STRICT_PLUGINS", "1")
    with pytest.raises(DuplicatePluginError):
        Registry(sources).names("adapter")


def test_a_misspelled_hook_is_reported_not_ignored(monkeypatch):
    monkeypatch.delenv("NENYAX_STRICT_PLUGINS", raising=False)

    class Misspelled:
        @hookimpl
        def nenyax_register_adaptors(self):
            return []

    registry = Registry.from_plugins(("typo", Misspelled()), ("fake", AdapterPlugin()))
    assert registry.names("adapter") == ["arith"]
    assert [f.plugin for f in registry.failures] == ["typo"]
    assert "nenyax_register_adaptors" in registry.failures[0].error


class _BrokenHook:
    @hookimpl
    def nenyax_register_adapters(self):
        raise RuntimeError("boom")


def test_broken_plugin_is_reported_and_others_still_load(monkeypatch):
    monkeypatch.delenv("NENYAX_STRICT_PLUGINS", raising=False)
    registry = Registry.from_plugins(("broken", _BrokenHook()), ("fake", AdapterPlugin()))
    assert registry.names("adapter") == ["arith"]
    assert [f.plugin for f in registry.failures] == ["broken"]
    assert "boom" in registry.failures[0].error


def test_strict_mode_makes_a_broken_plugin_fatal(monkeypatch):
    monkeypatch.setenv("NENYAX_STRICT_PLUGINS", "1")
    registry = Registry.from_plugins(("broken", _BrokenHook()), ("fake", AdapterPlugin()))
    with pytest.raises(PluginLoadError, match=r"'broken'.*failed to load"):
        registry.names("adapter")


def test_spec_of_wrong_kind_is_refused(monkeypatch):
    monkeypatch.setenv("NENYAX_STRICT_PLUGINS", "1")

    class WrongKind:
        @hookimpl
        def nenyax_register_adapters(self):
            return PluginSpec(kind="sandbox", name="x", factory="a:b")

    with pytest.raises(PluginLoadError, match="returned a sandbox spec"):
        Registry.from_plugins(("wrong", WrongKind())).names("adapter")


@pytest.mark.parametrize(
    ("fields", "fragment"),
    [
        ({"kind": "widget"}, "is not one of"),
        ({"name": "Bad Name"}, "must be lower-case"),
        ({"factory": "not-an-import-string"}, "import string"),
    ],
)
def test_invalid_specs(fields, fragment):
    with pytest.raises(ManifestError, match=fragment):
        PluginSpec(**{"kind": "adapter", "name": "ok", "factory": "a.b:C", **fields})


def test_discovery_is_lazy(tmp_path, monkeypatch):
    # A real, importable implementation module: discovery must list its plugin without importing it.
    (tmp_path / "nenyax_lazy_probe.py").write_text("from nenyax_testsupport.fakes import ArithAdapter as Adapter\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "nenyax_lazy_probe", raising=False)
    registry = Registry.from_plugins(("fake", AdapterPlugin(factory="nenyax_lazy_probe:Adapter")))
    try:
        assert registry.names("adapter") == ["arith"]
        assert registry.get("adapter", "arith").spec.factory == "nenyax_lazy_probe:Adapter"
        assert "nenyax_lazy_probe" not in sys.modules
        assert isinstance(registry.create("adapter", "arith"), ArithAdapter)
        assert "nenyax_lazy_probe" in sys.modules  # imported on first use
    finally:
        sys.modules.pop("nenyax_lazy_probe", None)


def test_factory_that_cannot_import_is_a_clear_error():
    registry = Registry.from_plugins(("fake", AdapterPlugin(factory="nenyax_not_installed_anywhere:X")))
    with pytest.raises(PluginLoadError, match="could not be imported"):
        registry.create("adapter", "arith")


def test_every_factory_is_called_as_factory_options_and_a_wrong_option_is_one_sentence():
    registry = Registry.from_plugins(
        ("judges", KindPlugin("judge", "length", "nenyax_testsupport.fakes:LengthJudge")),
        ("adapters", AdapterPlugin(factory="nenyax_testsupport.fakes:NeedsAnOptionAdapter")),
        ("providers", KindPlugin("provider", "echo", "nenyax_testsupport.fakes:EchoProvider")),
    )
    assert registry.create("judge", "length").size == 3
    assert registry.create("judge", "length", size=5).size == 5
    assert registry.create("provider", "echo", base_url="http://x", api_key="k").base_url == "http://x"
    with pytest.raises(UsageError, match=r"^The judge 'length' takes no option 'sise'; it takes size\.$"):
        registry.create("judge", "length", sise=5)
    with pytest.raises(UsageError, match=r"^The adapter 'arith' cannot be built with the options \[\] \(missing"):
        registry.create("adapter", "arith")
    assert registry.create("adapter", "arith", size=2).size == 2


def test_load_routes_by_scheme_and_suggests_formats():
    registry = Registry.from_plugins(("fake", AdapterPlugin()))
    env = load("arith:add?size=3", registry=registry)
    assert env.task_ids() == ["add/0/0", "add/0/1", "add/0/2"]
    with pytest.raises(UnknownPluginError, match="Did you mean 'arith'"):
        load("arth:add", registry=registry)
    # An install is suggested only for a distribution that exists (packages/ of this repository).
    with pytest.raises(UnknownPluginError) as unknown:
        load("zzz:add", registry=registry)
    assert "pip install" not in str(unknown.value)
    with pytest.raises(UnknownPluginError, match="`pip install nenyax-adapters-gymnasium`"):
        load("gymnasium:CartPole-v1", registry=registry)
    with pytest.raises(UnknownPluginError, match="Did you mean 'gymnasium'"):
        load("Gymnasium:CartPole-v1", registry=registry)
    with pytest.raises(UnknownPluginError, match="Did you mean 'arith'"):
        load("ARITH:add", registry=registry)  # the wrong case still finds the installed name


def test_messages_speak_english():
    from nenyax.core.errors import did_you_mean, plural, with_article

    assert (
        did_you_mean("zzzzzz", ["null", "random", "reference"], "policy") == " Known policies: null, random, reference."
    )
    assert [with_article(w) for w in ("int", "str", "ndarray", "tuple")] == ["an int", "a str", "an ndarray", "a tuple"]
    assert [plural(w) for w in ("format", "policy", "key", "judge")] == ["formats", "policies", "keys", "judges"]


def test_an_unknown_builtin_policy_lists_policies():
    from nenyax.core.engine.policies import as_policy

    with pytest.raises(UsageError, match="Known policies: null, random, reference"):
        as_policy("zzzzzzzz")


def test_oracle_is_another_name_of_the_reference_policy():
    from nenyax.core.engine.policies import ReferencePolicy, as_policy

    assert isinstance(as_policy("oracle"), ReferencePolicy)
