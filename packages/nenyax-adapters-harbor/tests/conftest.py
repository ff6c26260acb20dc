"""Copies of the shipped example tasks to break or change, and the checks' folder of the tests' own.

Everything here runs real harbor trials in the real bwrap sandbox (no fakes): a machine without
bubblewrap skips, saying so, except on CI, where it fails.
"""

import os
import shutil

import pytest

from nenyax.adapters.harbor.adapter import EXAMPLES_DIR


def pytest_collection_modifyitems(config, items):
    if shutil.which("bwrap"):
        return
    why = "bubblewrap is not installed (apt-get install bubblewrap): harbor's trials run in the bwrap sandbox"
    if os.environ.get("CI"):
        raise pytest.UsageError(why)
    for item in items:
        item.add_marker(pytest.mark.skip(reason=why))


@pytest.fixture(autouse=True)
def _own_checks_dir(tmp_path, monkeypatch):
    # `nenyax check` records tiers; the tests' must not become a developer's.
    monkeypatch.setenv("NENYAX_CHECKS_DIR", str(tmp_path / "checks"))


@pytest.fixture
def copy_task(tmp_path):
    """copy_task("hello-file") -> a fresh copy of that example task, to edit."""

    def copy(name, as_name=None):
        target = tmp_path / "tasks" / (as_name or name)
        shutil.copytree(EXAMPLES_DIR / name, target)
        return target

    return copy
