"""The CI rule: without karotte or a podman to run its containers the tests skip, saying so, except on CI.

On CI (``CI`` set) both must be there: a missing one fails the tests rather than skipping them. The
`karotte` nox session installs karotte (Python 3.12) and runs the tests beside a private podman engine
(noxlib/podman.py), whose configuration variables reach the podman command karotte runs.
"""

import os
import shutil
from importlib import metadata

import pytest

try:
    KAROTTE = metadata.version("karotte")
except metadata.PackageNotFoundError:
    KAROTTE = None

WANTED = {
    "karotte": "karotte is not installed (Python >= 3.12): nox -s karotte",
    "podman": "podman is not installed, and karotte's podman runtime drives it: nox -s karotte",
}


def pytest_configure(config):
    config.addinivalue_line("markers", "karotte: imports the real karotte")
    config.addinivalue_line("markers", "podman: runs karotte's containers on podman")
    config.addinivalue_line("markers", "model: plays the embedded model local:smollm2-135m")


def _missing(item) -> str | None:
    if (item.get_closest_marker("karotte") or item.get_closest_marker("podman")) and KAROTTE is None:
        return WANTED["karotte"]
    if item.get_closest_marker("podman") and shutil.which("podman") is None:
        return WANTED["podman"]
    return None


def pytest_runtest_setup(item):
    missing = _missing(item)
    if missing is None:
        return
    if os.environ.get("CI"):
        pytest.fail(missing)
    pytest.skip(missing)


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
