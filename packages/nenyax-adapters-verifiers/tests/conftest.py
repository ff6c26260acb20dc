"""The CI rule for the verifiers API the installed package offers (`support.APIS`).

Tests marked ``legacy`` need verifiers 0.3 (its legacy API); tests marked ``v1`` need v1 (0.3 or 0.4).
A test whose API is missing skips, saying so, except on CI, where the API the session installed
(``NENYAX_VERIFIERS_API``: ``legacy`` or ``v1``) must be there, and without that variable at least one
of them: a missing one fails rather than skips.
"""

import os

import pytest
from support import APIS, VERSION, WANTED


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
