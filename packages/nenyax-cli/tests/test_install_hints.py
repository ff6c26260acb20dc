"""A URI whose adapter is not installed names the install that makes it work, library and Python included."""

import importlib.metadata
import subprocess
import sys

import pytest


def _installed(distribution):
    try:
        importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def _check(uri):
    done = subprocess.run(
        [sys.executable, "-m", "nenyax.cli", "check", uri], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    return done.stderr


@pytest.mark.parametrize(
    ("uri", "distribution", "install"),
    [
        ("lm_eval:gsm8k", "nenyax-adapters-lm-eval", "pip install 'nenyax-adapters-lm-eval[lm-eval]'`"),
        ("hud:./tasks.json", "nenyax-adapters-hud", "pip install 'nenyax-adapters-hud[hud]'`"),
        ("harbor:./my-task", "nenyax-adapters-harbor", "pip install nenyax-adapters-harbor`"),
    ],
)
def test_a_format_without_its_adapter_names_the_install_with_its_library(uri, distribution, install):
    if _installed(distribution):
        pytest.skip(f"{distribution} is installed here: the hint is for where it is not")
    said = _check(uri)
    assert f"No adapter for format {uri.partition(':')[0]!r} is installed." in said
    assert install in said
    if uri.startswith("harbor:") and sys.version_info < (3, 12):
        assert "harbor itself needs Python >= 3.12" in said
