"""Real NeMo Gym resources servers on 127.0.0.1, started from the interpreter that has nemo-gym.

nemo-gym needs Python >= 3.12; these tests may run on 3.11. nox builds a 3.12 venv with nemo-gym
and sets NENYAX_NEMO_GYM_PYTHON to its python; without it (and without nemo-gym here) the tests
that need a server skip, saying so.
"""

import subprocess
from pathlib import Path

import pytest

from nenyax.adapters.nemo_gym import launcher
from nenyax.core import UsageError

MISBEHAVING = Path(__file__).parent / "servers" / "misbehaving" / "app.py"
NEITHER = Path(__file__).parent / "servers" / "neither" / "app.py"


@pytest.fixture(scope="session")
def nemo_python():
    try:
        return launcher.server_python()
    except UsageError as exc:
        pytest.skip(str(exc))


def _serve(python, **how):
    server = launcher.start_server(python, **how)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def nemo_gym_version(nemo_python):
    """The nemo-gym release the server interpreter has (0.7.0 in the default venv)."""
    code = "import importlib.metadata as m; print(m.version('nemo-gym'))"
    return subprocess.run([nemo_python, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture(scope="session")
def mcqa(nemo_python):
    yield from _serve(nemo_python, server="mcqa")


@pytest.fixture(scope="session")
def reasoning_gym(nemo_python):
    yield from _serve(nemo_python, server="reasoning_gym")


@pytest.fixture(scope="session")
def counter(nemo_python):
    """nemo-gym's example_session_state_mgmt: tools, and state kept per session cookie."""
    yield from _serve(nemo_python, server="example_session_state_mgmt")


@pytest.fixture(scope="session")
def misbehaving(nemo_python):
    yield from _serve(nemo_python, app=MISBEHAVING)


@pytest.fixture
def doomed(nemo_python):
    """A misbehaving server of its own, for a test that kills it."""
    yield from _serve(nemo_python, app=MISBEHAVING)


@pytest.fixture(scope="session")
def blackjack(nemo_python):
    """nemo-gym's blackjack: a GymnasiumServer (/reset, /step), as gymnasium_agent plays it."""
    yield from _serve(nemo_python, server="blackjack")


@pytest.fixture(scope="session")
def neither(nemo_python):
    yield from _serve(nemo_python, app=NEITHER)
