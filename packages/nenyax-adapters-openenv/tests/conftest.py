"""Real OpenEnv servers on 127.0.0.1, built with OpenEnv's own `create_app` (see `guess_env.py`)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from nenyax.core import PolicyInfo

sys.path.insert(0, str(Path(__file__).parent))

from openenv_servers import Servers


@pytest.fixture(scope="session")
def servers():
    """The seeded, unseeded, single-session and self-judging guess games, served for the whole test session."""
    running = Servers("seeded", "unseeded", "single", "judged")
    yield running
    running.stop()


@pytest.fixture
def own_server():
    """A seeded server of this test's own, which the test may kill."""
    running = Servers("seeded")
    yield running
    running.stop()


class ScriptedChat:
    """A text policy replying from a script: stands in for a chat model (the model runs in the integration suite)."""

    info = PolicyInfo(kind="callable", name="scripted-chat")
    speaks_text = True

    def __init__(self, reply):
        self.reply = reply
        self.seen = []

    async def act(self, turn):
        self.seen.append([dict(m) for m in turn.messages])
        return self.reply(turn) if callable(self.reply) else self.reply


@pytest.fixture
def chat():
    """The scripted stand-in for a chat model."""
    return ScriptedChat
