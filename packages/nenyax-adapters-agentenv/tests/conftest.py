"""The CI rule: without agentenv-framework the tests skip, saying so, except on CI, where they fail.

AgentEnv writes every run to its stores under ``$XDG_STATE_HOME/agent-env``: each test gets a folder of its own.
"""

import os
from importlib import metadata

import pytest

try:
    AGENTENV = metadata.version("agentenv-framework")
except metadata.PackageNotFoundError:
    AGENTENV = None
WANTED = "agentenv-framework is not installed: nox -s agentenv"


def pytest_configure(config):
    config.addinivalue_line("markers", "agentenv: drives the real agentenv-framework")
    config.addinivalue_line("markers", "model: plays the embedded model local:smollm2-135m")


def pytest_runtest_setup(item):
    if item.get_closest_marker("agentenv") is None or AGENTENV is not None:
        return
    if os.environ.get("CI"):
        pytest.fail(WANTED)
    pytest.skip(WANTED)


@pytest.fixture(autouse=True)
def _own_stores(monkeypatch, tmp_path_factory):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("agent-env-state")))
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
