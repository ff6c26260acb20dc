"""A URI whose adapter is not installed gets that adapter's install command, for every first-party adapter."""

from pathlib import Path

import pytest

from nenyax.core.engine.loader import KNOWN_ADAPTERS, load
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
        ("hud:./tasks.json", "nenyax-adapters-hud"),
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
