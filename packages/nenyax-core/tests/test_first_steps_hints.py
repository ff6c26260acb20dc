"""What a new user's first mistakes get told: a missing adapter's install command, a scheme spelled with '-'."""

from pathlib import Path

import pytest

from nenyax.core import install
from nenyax.core.contract.uri import parse_uri
from nenyax.core.engine.loader import load
from nenyax.core.errors import BadURIError, UnknownPluginError
from nenyax.core.plugins.registry import Registry

CHECKOUT = Path(__file__).resolve().parents[3]


def _missing_openenv() -> str:
    with pytest.raises(UnknownPluginError) as info:
        load("openenv:ws://127.0.0.1:1", registry=Registry([]))
    return str(info.value)


def test_a_missing_adapter_from_a_checkout_names_its_folder_and_its_published_name(monkeypatch):
    monkeypatch.chdir(CHECKOUT)
    message = _missing_openenv()
    assert "`pip install ./packages/nenyax-adapters-openenv`" in message
    assert "`pip install nenyax-adapters-openenv`" in message


def test_a_missing_adapter_outside_a_checkout_names_both_ways(monkeypatch):
    monkeypatch.setattr(install, "checkout_packages", lambda: None)
    message = _missing_openenv()
    assert "`pip install nenyax-adapters-openenv`" in message
    assert "`pip install ./packages/nenyax-adapters-openenv`" in message
    assert "checkout" in message


@pytest.mark.parametrize("uri", ["reasoning-gym:basic_arithmetic", "reasoning.gym:basic_arithmetic"])
def test_a_hyphen_or_dot_in_the_scheme_gets_the_underscore_spelling(uri):
    with pytest.raises(BadURIError) as info:
        parse_uri(uri)
    message = str(info.value)
    assert "Did you mean 'reasoning_gym'" in message
    assert "'reasoning_gym:basic_arithmetic'" in message
    assert "is not an environment URI" not in message
