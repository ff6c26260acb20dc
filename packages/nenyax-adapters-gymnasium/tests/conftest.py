import pytest

from nenyax_testsupport.fakes import ScriptedChat

# The test envs are loaded by import path (gymnasium:nenyax_test_envs:<Class>): their folder is on `pythonpath`.


@pytest.fixture
def chat():
    """The scripted stand-in for a chat model (a real model plays in tests/test_embedded_model.py)."""
    return ScriptedChat
