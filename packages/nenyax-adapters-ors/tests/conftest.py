import pytest
from servers import Served  # beside the tests, on `pythonpath`

from nenyax_testsupport.policies import Scripted


@pytest.fixture(scope="session")
def ors_server():
    """The real ors-sdk server with the tests' own environments (ors_envs.py)."""
    with Served("ors_envs.py") as served:
        yield served


@pytest.fixture
def fresh_ors_server():
    """A server of this test's own, which the test may kill."""
    with Served("ors_envs.py") as served:
        yield served


@pytest.fixture(scope="session")
def openreward_server():
    """openreward's ORS server (a superset of ors-sdk's) with the tests' own environment.

    openreward is in this distribution's test group: without it (or with a broken install) these tests
    fail on the import, they do not skip.
    """
    import openreward  # noqa: F401

    with Served("openreward_envs.py") as served:
        yield served


@pytest.fixture
def chat():
    """A text policy replying from a script: stands in for a chat model (the embedded one runs in tests/ at the root)."""
    return Scripted
