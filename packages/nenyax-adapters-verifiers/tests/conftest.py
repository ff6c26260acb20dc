"""Which verifiers API the installed package offers, and the test environments' folder on sys.path.

Tests marked ``legacy`` need verifiers 0.3 (its legacy API); tests marked ``v1`` need v1 (0.3 or 0.4).
A test whose API is missing skips, saying so, except on CI, where the API the session installed
(``NENYAX_VERIFIERS_API``: ``legacy`` or ``v1``) must be there, and without that variable at least one
of them: a missing one fails rather than skips.
"""

import importlib.util
import os
import sys
from importlib import metadata
from pathlib import Path

import pytest

ENVS = Path(__file__).parent / "envs"
sys.path.insert(0, str(ENVS))  # the tests' own environment modules, as installed env ids would be
sys.path.insert(0, str(Path(__file__).parent))


def _has(module):
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


try:
    VERSION = metadata.version("verifiers")
except metadata.PackageNotFoundError:
    VERSION = None
# v1 tasksets run on verifiers 0.4 (0.3's v1 is an earlier shape the adapter refuses in one sentence).
APIS = {
    "legacy": VERSION is not None and _has("verifiers.legacy"),
    "v1": VERSION is not None and _has("verifiers.v1") and tuple(map(int, VERSION.split(".")[:2])) >= (0, 4),
}
WANTED = {
    "legacy": "pip install 'verifiers>=0.3,<0.4' (nox -s verifiers-0.3)",
    "v1": "pip install 'verifiers>=0.4,<0.5' (nox -s verifiers-0.4)",
}


def pytest_configure(config):
    config.addinivalue_line("markers", "legacy: needs verifiers' legacy API (verifiers 0.3)")
    config.addinivalue_line("markers", "v1: needs verifiers' v1 API (verifiers 0.4)")


def pytest_runtest_setup(item):
    for api in ("legacy", "v1"):
        if item.get_closest_marker(api) is None or APIS[api]:
            continue
        why = f"verifiers' {api} API is not installed (verifiers {VERSION or 'missing'}): {WANTED[api]}"
        expected = os.environ.get("NENYAX_VERIFIERS_API")
        if os.environ.get("CI") and (expected == api or (expected is None and not any(APIS.values()))):
            pytest.fail(why)
        pytest.skip(why)


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
