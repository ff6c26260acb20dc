"""Environments registered by other packages (MiniGrid), by gymnasium's own ``module:EnvId`` form, and env classes
made with their registration's settings."""

import importlib.util
import subprocess
import sys

import pytest

from nenyax.adapters.gymnasium.adapter import GymnasiumAdapter
from nenyax.core import BadURIError, Status, Tier, check, load

MINIGRID = "gymnasium:minigrid:MiniGrid-Empty-5x5-v0"


def test_a_third_party_id_loads_by_module_and_id():
    env = load(MINIGRID)
    assert env.manifest.extra["spec"]["id"] == "MiniGrid-Empty-5x5-v0"
    assert env.manifest.extra["spec"]["entry_point"] == "minigrid.envs:EmptyEnv"
    assert env.task_ids(limit=1) == ["minigrid:MiniGrid-Empty-5x5-v0/seed/0"]
    traj = env.rollout("random", task="minigrid:MiniGrid-Empty-5x5-v0/seed/2")
    assert traj.status is Status.OK
    assert traj.steps
    assert traj.seed == 2


def test_minigrid_is_trainable_and_its_manifest_is_the_same_in_a_fresh_process():
    # MissionSpace's repr holds a function address; the fresh-process check fails if it reaches the manifest.
    report = check(MINIGRID, samples=2)
    assert report.tier is Tier.TRAINABLE, [(r.name, r.evidence) for r in report.results if r.outcome != "passed"]
    assert " at 0x" not in load(MINIGRID).manifest.observation


def test_only_the_named_module_is_imported():
    code = (
        "import sys; from nenyax.core import load; load('gymnasium:CartPole-v1'); a = 'minigrid' in sys.modules; "
        f"load({MINIGRID!r}); print(a, 'minigrid' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True"]


def test_env_ids_lists_a_modules_ids_in_the_uri_form():
    ids = GymnasiumAdapter.env_ids(import_modules=["minigrid"])
    assert "minigrid:MiniGrid-Empty-5x5-v0" in ids
    assert "CartPole-v1" in ids
    assert "MiniGrid-Empty-5x5-v0" not in ids  # listed once, by the form that loads it
    with pytest.raises(BadURIError, match="Cannot import the module 'no_such_module_xyz'"):
        GymnasiumAdapter.env_ids(import_modules=["no_such_module_xyz"])


def test_a_misspelt_third_party_id_gets_a_suggestion():
    with pytest.raises(BadURIError, match="Did you mean 'MiniGrid-Empty-5x5-v0'") as info:
        load("gymnasium:minigrid:MiniGrid-Empty-5x5-v9")
    assert "\n" not in str(info.value)


def test_an_id_another_package_registers_suggests_the_form_that_loads_it():
    # Named alone, MiniGrid's id is unknown until minigrid is imported (a fresh interpreter: this one may have).
    alone = subprocess.run(
        [sys.executable, "-c", "from nenyax.core import load; load('gymnasium:MiniGrid-Empty-5x5-v0')"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert "Its package registers it when imported: write gymnasium:minigrid:MiniGrid-Empty-5x5-v0." in alone.stderr
    assert "Known environment ids" not in alone.stderr
    with pytest.raises(BadURIError, match=r"write gymnasium:ale_py:ALE/Pong-v5") as info:
        load("gymnasium:ALE/Pong-v5")
    assert ("pip install ale-py" in str(info.value)) == (importlib.util.find_spec("ale_py") is None)
    with pytest.raises(BadURIError, match=r"write gymnasium:<module>:Acme/Maze-v0, naming that module\.$"):
        load("gymnasium:Acme/Maze-v0")


def test_an_env_class_uses_its_registration():
    env = load("gymnasium:gymnasium.envs.classic_control.cartpole:CartPoleEnv")
    spec = env.manifest.extra["spec"]
    # CartPole-v1's settings (the newest registration of the class), not the 1000-step fallback.
    assert (spec["registration"], spec["reward_threshold"], spec["max_episode_steps"]) == ("CartPole-v1", 475.0, 500)
    assert env.manifest.capabilities.max_turns == 500
    traj = env.rollout(lambda obs: 1 if obs[2] + 0.5 * obs[3] > 0 else 0)
    assert len(traj.steps) == 500
    assert traj.steps[-1].truncated
    assert traj.judgment.passed is True
    grid = load("gymnasium:minigrid.envs:EmptyEnv?size=5").manifest.extra["spec"]
    assert grid["registration"] == "MiniGrid-Empty-8x8-v0"
    assert grid["kwargs"] == {"size": 5}


def test_an_unregistered_class_keeps_the_fallback_time_limit():
    env = load("gymnasium:nenyax_test_envs:BrokenStepEnv")
    assert env.manifest.extra["spec"]["registration"] is None
    assert env.manifest.capabilities.max_turns == 1000
