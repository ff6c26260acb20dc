"""The CI rule: without hud the tests skip, saying so, except on CI.

On CI (``CI`` set) hud must be installed: a missing one fails the tests rather than skipping them.
Everything runs offline: the tasks here grade in-process, and the adapter gives hud no platform key.
"""

import os
from importlib import metadata

import pytest

try:
    HAS_HUD = metadata.version("hud").startswith("0.6.")
except metadata.PackageNotFoundError:
    HAS_HUD = False
WANTED = "hud 0.6 is not installed: pip install 'hud==0.6.21' (nox -s hud)"


def pytest_configure(config):
    config.addinivalue_line("markers", "hud: drives the real hud")
    config.addinivalue_line("markers", "model: plays the embedded model local:smollm2-135m")


def pytest_runtest_setup(item):
    if item.get_closest_marker("hud") is None or HAS_HUD:
        return
    if os.environ.get("CI"):
        pytest.fail(WANTED)
    pytest.skip(WANTED)


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
