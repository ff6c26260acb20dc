"""skyrl-gym's own `make("nenyax")`: a reasoning-gym task played one SkyRL turn at a time, its reward the
judgment Nenyax itself gives the same reply."""

from __future__ import annotations

import asyncio

import pytest
import skyrl_gym

import nenyax.trainers.skyrl as bridge
from nenyax.core import PolicyInfo, load
from nenyax.core.errors import InfraFailure

STEP = "reasoning_gym:basic_arithmetic?size=2"


class Says:
    """A text policy that always replies `text`, for Nenyax's own loop."""

    speaks_text = True
    info = PolicyInfo(kind="callable", name="says")

    def __init__(self, text: str) -> None:
        self.text = text

    async def act(self, turn):
        return self.text


def answers(task: str) -> list[str]:
    """The task's right answer (its reference, ``<answer>N</answer>``) and a wrong one."""
    session = load(STEP).session(task=task, seed=0)
    try:
        right = str(session.reference_action())
    finally:
        session.close()
    return [right, "<answer>123456789</answer>"]


def test_make_nenyax_plays_a_task_and_rewards_it_as_nenyax_judges_it():
    assert "nenyax" in skyrl_gym.registry  # registered by importing the bridge
    rows = bridge.skyrl_rows(STEP)
    assert len(rows) == 2
    assert {r["env_class"] for r in rows} == {"nenyax"}
    row = rows[0]
    task = row["env_extras"]["nenyax_task"]
    rewards = []
    for reply in answers(task):
        env = skyrl_gym.make("nenyax", env_config={}, extras={**row["env_extras"], "max_turns": 1})
        chat, meta = env.init(row["prompt"])
        assert chat == row["prompt"]
        assert meta["nenyax_task"] == task
        out = env.step(reply)
        env.close()
        nenyax = asyncio.run(load(STEP).arollout(Says(reply), task=task, seed=0))
        assert out["done"] is True
        assert out["reward"] == nenyax.judgment.score  # the judgment Nenyax gives the same reply
        assert out["metadata"]["nenyax_status"] == nenyax.status.value == "ok"
        assert out["metadata"]["nenyax_components"] == dict(nenyax.judgment.components)
        assert env.get_metrics()["nenyax_score"] == out["reward"]
        rewards.append(out["reward"])
    assert rewards[0] == 1.0 > rewards[1]  # the reference answer passes, a wrong one does not


def test_an_infrastructure_failure_is_raised_never_a_reward_of_zero(monkeypatch):
    row = bridge.skyrl_rows(STEP, limit=1)[0]
    env = skyrl_gym.make("nenyax", extras=row["env_extras"])
    env.init(row["prompt"])

    def lost(self, action):
        raise InfraFailure("The environment's backend went away.")

    # The environment losing its backend mid-episode: infra_error, which SkyRL's text-env loop cannot mask.
    session = load(STEP).session(task=row["env_extras"]["nenyax_task"])
    monkeypatch.setattr(type(session), "act", lost)
    session.close()
    with pytest.raises(bridge.EpisodeFailed, match="infra_error"):
        env.step("3")
    assert env.trajectory.status.value == "infra_error"
    assert env.trajectory.judgment is None


def test_an_env_skyrl_drops_unfinished_ends_its_episode():
    # SkyRL's generator never calls close(): an episode it stopped (its length limit) must not wait forever.
    import gc

    from nenyax.trainers.skyrl import text_env

    row = bridge.skyrl_rows(STEP, limit=1)[0]
    env = skyrl_gym.make("nenyax", extras=row["env_extras"])
    env.init(row["prompt"])
    episode = env._episode
    del env
    gc.collect()

    async def ended():
        return await asyncio.wait_for(asyncio.shield(episode.played), timeout=30)

    trajectory = text_env._LOOP.run(ended())
    assert trajectory.status.value == "policy_error"  # ended as Nenyax ends a policy that stopped answering
