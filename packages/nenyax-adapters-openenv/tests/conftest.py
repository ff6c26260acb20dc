"""Real OpenEnv servers on 127.0.0.1, built with OpenEnv's own `create_app` (see `guess_env.py`)."""

from __future__ import annotations

import pytest
from openenv_servers import Servers  # beside the tests, on `pythonpath`

from nenyax_testsupport.fakes import ScriptedChat


@pytest.fixture(scope="session")
def servers():
    """The seeded, unseeded, single-session and self-judging guess games, and the two with the Task API."""
    running = Servers("seeded", "unseeded", "single", "judged", "tasks", "tasks-ignored")
    yield running
    running.stop()


@pytest.fixture
def own_server():
    """A seeded server of this test's own, which the test may kill."""
    running = Servers("seeded")
    yield running
    running.stop()


@pytest.fixture
def chat():
    """The scripted stand-in for a chat model."""
    return ScriptedChat
