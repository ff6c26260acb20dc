import sys
from pathlib import Path

import pytest

from nenyax.core.contract.trajectory import PolicyInfo

# The test envs are loaded by import path (gymnasium:nenyax_test_envs:<Class>), so their folder must be importable.
sys.path.insert(0, str(Path(__file__).parent))


class ScriptedChat:
    """A text policy replying from a script, standing in for a chat model.

    The codec tests need exact replies (valid, malformed, out of range), which no real model gives on
    demand; a real model plays through the codec in tests/test_embedded_model.py.
    """

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
