"""User mistakes get one sentence, whichever verifiers is installed (or none)."""

import subprocess
import sys

import pytest

from nenyax.core import BadURIError, UsageError, load


def _one_sentence(exc):
    text = str(exc)
    assert "\n" not in text
    assert text.rstrip().endswith((".", "?", ")"))


def test_an_unknown_env_id_is_one_sentence():
    with pytest.raises(BadURIError) as raised:
        load("verifiers:no-such-env-anywhere")
    assert "no_such_env_anywhere" in str(raised.value)
    _one_sentence(raised.value)


def test_an_unknown_attribute_suggests_close_names():
    with pytest.raises(BadURIError) as raised:
        load("verifiers:nenyax.adapters.verifiers.demo:load_enviroment")
    assert "load_environment" in str(raised.value)


@pytest.mark.parametrize(
    "uri",
    ["verifiers:", "verifiers:a b", "verifiers:vf-gsm8k-v1?reference=plain", "verifiers:vf-gsm8k-v1?max_turns=0"],
)
def test_malformed_uris_are_one_sentence(uri):
    with pytest.raises(BadURIError) as raised:
        load(uri)
    _one_sentence(raised.value)


def test_a_module_that_is_no_environment_says_so():
    with pytest.raises(BadURIError) as raised:
        load("verifiers:json")
    assert "no load_environment()" in str(raised.value)
    with pytest.raises(BadURIError):
        load("verifiers:json:dumps")  # a factory, but not of an environment: its call fails


def test_missing_verifiers_says_how_to_install(tmp_path):
    # A fresh interpreter where `verifiers` cannot be found (a meta-path hook hides it).
    code = (
        "import sys, importlib.abc, importlib.metadata as md\n"
        "class Hide(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'verifiers' or name.startswith('verifiers.'): raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, Hide())\n"
        "real = md.version\n"
        "md.version = lambda n: (_ for _ in ()).throw(md.PackageNotFoundError(n)) if n == 'verifiers' else real(n)\n"
        "from nenyax.core import load, UsageError\n"
        "try: load('verifiers:anything')\n"
        "except UsageError as e: print(e)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert "pip install verifiers" in done.stdout
    assert done.stdout.count("\n") == 1


@pytest.mark.legacy
def test_a_ready_environment_refuses_arguments():
    with pytest.raises(UsageError):
        load("verifiers:vf_odd_legacy:READY?x=1")


@pytest.mark.legacy
def test_a_v1_taskset_under_verifiers_0_3_says_to_upgrade():
    with pytest.raises(UsageError) as raised:
        load("verifiers:vf-gsm8k-v1")
    assert "verifiers>=0.4" in str(raised.value)


def test_a_package_installed_but_broken_is_not_called_missing(tmp_path, monkeypatch):
    # Finding `broken_pkg.env` imports `broken_pkg`, whose own import fails: that is the sentence, not
    # "no installed module provides an environment: install it".
    package = tmp_path / "nx_broken_vf_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from json import no_such_name\n")
    (package / "env.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(UsageError) as raised:
        load("verifiers:nx_broken_vf_pkg.env")
    text = str(raised.value)
    assert "Importing 'nx_broken_vf_pkg.env' failed although it is installed" in text
    assert "no_such_name" in text
    assert "install it" not in text
    _one_sentence(raised.value)
