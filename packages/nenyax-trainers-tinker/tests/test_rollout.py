"""`nenyax_group_rollout`: Nenyax's own loop plays the group, sampled on the (fake, embedded-model) SamplingClient,
and the cookbook gets a `TrajectoryGroup` of exactly what was sampled, rewarded by the judgments."""

from __future__ import annotations

import asyncio

import pytest
from conftest import RENDERER, URI
from support import nenyax_score
from tinker_cookbook.exceptions import AllTrajectoriesFailedError
from tinker_cookbook.renderers import get_text_content

from nenyax.core import load
from nenyax.trainers.tinker import NenyaxEnvGroupBuilder, nenyax_group_rollout
from nenyax.trainers.tinker.builder import renderer


def test_group_rollout_is_what_was_sampled_and_judged(client, model_folder):
    task = load(URI).task_ids()[1]
    builder = NenyaxEnvGroupBuilder(URI, task, 2, seed=3, model_name=model_folder, renderer_name=RENDERER)
    group = asyncio.run(nenyax_group_rollout(builder, client, max_tokens=12))

    assert len(group.trajectories_G) == 2
    assert not group.rollout_errors
    assert sorted(client.sampled) == sorted(
        (t.ob.to_ints(), t.ac.tokens, t.ac.logprobs)
        for trajectory in group.trajectories_G
        for t in trajectory.transitions
    )
    render = renderer(model_folder, RENDERER)
    for trajectory, reward in zip(group.trajectories_G, group.final_rewards_G, strict=True):
        (transition,) = trajectory.transitions
        assert transition.episode_done
        assert transition.reward == 0.0
        assert len(transition.ac.tokens) <= 12
        reply = get_text_content(render.parse_response(transition.ac.tokens)[0])
        assert reward == nenyax_score(URI, task, 3, reply)


def test_an_unreachable_service_is_no_reward(client, model_folder):
    client.fail = ConnectionError("tinker is unreachable")
    builder = NenyaxEnvGroupBuilder(
        URI, load(URI).task_ids()[0], 2, seed=0, model_name=model_folder, renderer_name=RENDERER
    )
    with pytest.raises(AllTrajectoriesFailedError, match="nenyax_infra_error") as failed:
        asyncio.run(nenyax_group_rollout(builder, client, max_tokens=8))
    assert "unreachable" in str(failed.value)
