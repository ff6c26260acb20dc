import sys
from pathlib import Path

import pytest

from nenyax.core.contract.trajectory import PolicyInfo

# The test envs are loaded by import path (gymnasium:nenyax_test_envs:<Class>), so their folder must be importable.
sys.path.insert(0, str(Path(__file__).parent))


class ScriptedChat:
    """A text policy replying from a script: stands in for a chat model (no model runs in these tests)."""

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
    return ScriptedChat
