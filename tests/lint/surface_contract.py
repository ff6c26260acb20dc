"""The import contract that keeps core's internals private: a plugin importing one fails `lint-imports`.

Run by `nox -s lint` after `lint-imports` (not collected by `integration`: the file is not named
``test_*``, and import-linter is installed in the lint session only). Each test lays a plugin package
into the ``nenyax`` namespace, in a folder of its own on the path, and runs the repository's own
import-linter configuration over it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = "plugin distributions import only core's surface"


def _lint_with_plugin(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    plugin = tmp_path / "site" / "nenyax" / "adapters" / "lintprobe"
    plugin.mkdir(parents=True)
    (plugin / "__init__.py").write_text(source)
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")  # the contracts, read from the cwd
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), os.environ.get("PYTHONPATH", "")])}
    lint = Path(sys.executable).with_name("lint-imports")
    return subprocess.run(
        [str(lint), "--no-cache"], cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=600
    )


def test_a_plugin_importing_a_private_core_module_breaks_the_contract(tmp_path):
    done = _lint_with_plugin(tmp_path, "from nenyax.core.engine.runner import run_episode\n")
    assert done.returncode == 1, done.stdout
    assert f"{CONTRACT} BROKEN" in done.stdout
    assert "nenyax.adapters.lintprobe -> nenyax.core.engine.runner" in done.stdout


@pytest.mark.parametrize(
    "source",
    [
        "from nenyax.core import StepEnvironment\nfrom nenyax.core.hookspecs import hookimpl\n",
        "from nenyax.core.errors import BadURIError\nfrom nenyax.core.toolkit.options import Option\n",
    ],
)
def test_a_plugin_using_only_the_surface_keeps_it(tmp_path, source):
    done = _lint_with_plugin(tmp_path, source)
    assert CONTRACT in done.stdout, done.stdout  # the contract ran over the probe...
    assert "nenyax.adapters.lintprobe" not in done.stdout  # ...and found nothing of it to refuse
