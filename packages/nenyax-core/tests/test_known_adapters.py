"""A URI whose adapter is not installed gets that adapter's install command, for every first-party adapter."""

import sys
from pathlib import Path

import pytest

from nenyax.core.engine.loader import KNOWN_ADAPTERS, install_hint, load
from nenyax.core.errors import UnknownPluginError
from nenyax.core.plugins.registry import Registry

PACKAGES = Path(__file__).resolve().parents[2]


def _missing(uri: str) -> str:
    with pytest.raises(UnknownPluginError) as info:
        load(uri, registry=Registry([]))
    return str(info.value)


def test_a_missing_lm_eval_adapter_names_its_distribution():
    message = _missing("lm_eval:gsm8k")
    assert "No adapter for format 'lm_eval' is installed." in message
    assert "nenyax-adapters-lm-eval" in message


@pytest.mark.parametrize(
    ("uri", "distribution"),
    [
        ("harbor:./task", "nenyax-adapters-harbor"),
        ("karotte:./my_env", "nenyax-adapters-karotte"),
        ("agentenv:./bundle", "nenyax-adapters-agentenv"),
        ("hud:./tasks.json", "'nenyax-adapters-hud[hud]'"),  # with its library, an extra
        ("verifiers:gsm8k", "nenyax-adapters-verifiers"),
    ],
)
def test_a_missing_adapter_names_its_distribution(uri, distribution):
    assert f"pip install {distribution}`" in _missing(uri)


def test_every_first_party_adapter_has_an_install_hint():
    """A new adapter distribution in this checkout must be added to KNOWN_ADAPTERS too."""
    adapters = {path.name for path in PACKAGES.glob("nenyax-adapters-*") if (path / "pyproject.toml").is_file()}
    assert adapters, PACKAGES
    assert set(KNOWN_ADAPTERS.values()) == adapters


@pytest.mark.parametrize(("uri", "requirement"), [("hud:./tasks.json", "[hud]'`"), ("lm_eval:gsm8k", "[lm-eval]'`")])
def test_an_adapter_whose_library_is_an_extra_installs_with_it(uri, requirement):
    """`pip install nenyax-adapters-lm-eval` alone installs no lm-eval: the hint names the extra, quoted."""
    message = _missing(uri)
    fmt = uri.partition(":")[0]
    assert f"pip install '{KNOWN_ADAPTERS[fmt]}{requirement}" in message


def test_verifiers_names_the_library_it_does_not_install():
    assert "installed beside it: `pip install 'verifiers>=0.3,<0.5'`" in _missing("verifiers:gsm8k")


def test_karotte_on_an_older_python_says_it_needs_3_12():
    assert "karotte itself needs Python >= 3.12 (this is Python 3.11.7)" in install_hint("karotte", (3, 11, 7))


def test_harbor_on_an_older_python_says_it_needs_3_12():
    on_311 = install_hint("harbor", (3, 11, 7))
    assert "pip install nenyax-adapters-harbor`" in on_311
    assert "harbor itself needs Python >= 3.12 (this is Python 3.11.7)" in on_311
    assert "Python >= 3.12" not in install_hint("harbor", (3, 12, 1))
    assert "Python >=" not in install_hint("verifiers", (3, 11, 7))
    if sys.version_info < (3, 12):  # and `load` says it where it applies, on the Python running the tests
        assert "needs Python >= 3.12" in _missing("harbor:./task")
