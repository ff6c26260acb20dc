"""Importing what an adapter imports loads no HTTP server, no runner and no proxy: they load when an episode runs."""

import subprocess
import sys

import pytest

HEAVY = ("aiohttp", "nenyax.core.engine.runner", "nenyax.core.models.proxy", "nenyax.core.engine.native_loop")


def _loaded_after(statement: str) -> list[str]:
    probe = f"import sys\n{statement}\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60)
    return done.stdout.split()


@pytest.mark.parametrize(
    "statement",
    [
        "from nenyax.core import StepEnvironment",
        "from nenyax.core import RolloutEnvironment, TaskEnvironment, NativeEpisode, NativeResult",
        "from nenyax.core import Manifest, Capabilities, Judgment, Trajectory, Session, EnvURI",
    ],
)
def test_the_surface_an_adapter_imports_loads_no_server(statement):
    assert _loaded_after(statement) == []


def test_the_runner_and_the_proxy_load_with_the_first_episode():
    # The probe itself proves it can see them: an episode played in the same interpreter loads all four.
    played = (
        "from nenyax.core import load\nfrom nenyax.core.plugins.registry import Registry\n"
        "from nenyax_testsupport.fakes import AdapterPlugin\n"
        "load('arith:add?size=2', registry=Registry.from_plugins(('arith', AdapterPlugin()))).rollout('reference')"
    )
    assert _loaded_after(played) == list(HEAVY)
