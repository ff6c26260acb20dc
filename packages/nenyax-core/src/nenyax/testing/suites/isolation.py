"""A pytest fixture keeping a test suite's `nenyax check` runs out of the developer's tier cache.

`nenyax check` remembers each tier it measures for `nenyax list`; a suite that runs it (in process or
in a subprocess) would otherwise fill the user's cache with the tiers of its fakes. Import it into a
``conftest.py``: ``from nenyax.testing.suites.isolation import own_checks_dir  # noqa: F401``.
"""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True)
def own_checks_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point ``NENYAX_CHECKS_DIR`` at the run's temporary folder unless the environment already names one
    (nox gives each session its own); subprocesses inherit it."""
    if not os.environ.get("NENYAX_CHECKS_DIR"):
        monkeypatch.setenv("NENYAX_CHECKS_DIR", str(tmp_path_factory.getbasetemp() / "nenyax-checks"))
