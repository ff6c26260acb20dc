"""The CI rule: without lm-eval the tests skip, saying so, except on CI.

On CI (``CI`` set) lm-eval must be installed: a missing one fails the tests rather than skipping them.
Every test runs offline (``HF_HUB_OFFLINE=1``): the tasks here read local JSON files.
"""

import importlib.util
import os

import pytest

HAS_LM_EVAL = importlib.util.find_spec("lm_eval") is not None
WANTED = "lm-eval is not installed: pip install 'lm-eval==0.4.13' (nox -s lm-eval)"


def pytest_configure(config):
    config.addinivalue_line("markers", "lm_eval: drives the real lm-eval")
    config.addinivalue_line("markers", "model: plays the embedded model local:smollm2-135m")


def pytest_runtest_setup(item):
    if item.get_closest_marker("lm_eval") is None or HAS_LM_EVAL:
        return
    if os.environ.get("CI"):
        pytest.fail(WANTED)
    pytest.skip(WANTED)


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
