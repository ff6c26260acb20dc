"""tinker-cookbook's own rollout code (`do_group_rollout`, `TinkerTokenCompleter`) on a Nenyax step environment,
and `nenyax_group_rollout` (Nenyax's own loop) on the same environment, both sampled by the sampling client.

One file: the lane runs files on two workers, and each worker would pay the imports and the model load again.
With `do_group_rollout` the group is played by the cookbook: its token completer asks the sampling client (the
embedded model, see embedded_sampler.py) for each reply, `EnvFromMessageEnv` parses it with the renderer, and the
Nenyax session plays and judges it. The trajectory must hold exactly the ids and logprobs the client sampled, and the group
reward must be the score Nenyax itself gives the same reply.
"""

from __future__ import annotations

import asyncio
import pickle

import pytest
from conftest import RENDERER, URI
from support import nenyax_score
from tinker_cookbook.completers import TinkerTokenCompleter
from tinker_cookbook.exceptions import AllTrajectoriesFailedError
from tinker_cookbook.renderers import get_text_content
from tinker_cookbook.rl.rollout_strategy import MinViableGroup
from tinker_cookbook.rl.rollouts import do_group_rollout

from nenyax.core import Status, load
from nenyax.trainers.tinker import EpisodeFailed, NenyaxEnvGroupBuilder, NenyaxRLDatasetBuilder, nenyax_group_rollout
from nenyax.trainers.tinker.builder import renderer


def test_renderer_is_smollm2s_chat_template(model_folder):
    """`qwen3_instruct` renders a Nenyax chat to the very ids SmolLM2's own chat template gives."""
    render = renderer(model_folder, RENDERER)
    session = load(URI).session(task=load(URI).task_ids(limit=1)[0], seed=0)
    messages = session.render()
    text = render.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert (
        render.build_generation_prompt(messages).to_ints()
        == render.tokenizer(text, add_special_tokens=False)["input_ids"]
    )
    assert render.get_stop_sequences() == [render.tokenizer.eos_token_id]  # <|im_end|>, what SmolLM2 ends a turn with


def test_do_group_rollout_trains_on_what_was_sampled(client, model_folder):
    dataset, test = asyncio.run(
        NenyaxRLDatasetBuilder(uri=URI, batch_size=2, group_size=2, model_name=model_folder, renderer_name=RENDERER)()
    )
    assert test is None
    assert len(dataset) == 1
    builders = dataset.get_batch(0)
    assert [b.task for b in builders] == load(URI).task_ids()
    builder = builders[0]
    assert isinstance(builder, NenyaxEnvGroupBuilder)
    assert pickle.loads(pickle.dumps(builder)) == builder  # only ids and strings: it travels to rollout workers
    assert builder.logging_tags() == ["nenyax", "reasoning_gym", "reasoning_gym:basic_arithmetic"]

    policy = TinkerTokenCompleter(client, max_tokens=12, temperature=1.0)  # type: ignore[arg-type]
    group = asyncio.run(do_group_rollout(builder, policy))

    assert len(group.trajectories_G) == 2
    assert not group.rollout_errors
    assert len(client.sampled) == 2
    render = renderer(model_folder, RENDERER)
    for trajectory, reward, metrics in zip(group.trajectories_G, group.final_rewards_G, group.metrics_G, strict=True):
        (transition,) = trajectory.transitions  # one question, one reply
        sampled = (transition.ob.to_ints(), transition.ac.tokens, transition.ac.logprobs)
        assert sampled in client.sampled  # the ids the client was given, the tokens and logprobs it returned
        assert transition.reward == 0.0
        assert transition.episode_done
        reply = get_text_content(render.parse_response(transition.ac.tokens)[0])
        assert reward == metrics["nenyax/score"] == nenyax_score(URI, builder.task, builder.seed, reply)
    assert group.get_total_rewards() == group.final_rewards_G
    prompts = {tuple(ob) for ob, _, _ in client.sampled}
    assert len(prompts) == 1  # one task, one seed: both members started from the same prompt


def test_the_reference_answer_scores_one(model_folder):
    """The environment's gold answer, fed through the token-level env, is judged 1 and rewarded 1."""
    builder = NenyaxEnvGroupBuilder(
        URI, load(URI).task_ids(limit=1)[0], 1, seed=0, model_name=model_folder, renderer_name=RENDERER
    )

    async def play():
        (env,) = await builder.make_envs()
        await env.initial_observation()
        gold = env.message_env.session.reference_action()
        tokens = [*env.renderer.tokenizer.encode(gold, add_special_tokens=False), env.renderer.tokenizer.eos_token_id]
        step = await env.step(tokens, extra={"stop_reason": "stop"})
        rewards = await builder.compute_group_rewards([], [env])
        await builder.cleanup()
        return step, rewards

    step, [(reward, metrics)] = asyncio.run(play())
    assert step.episode_done
    assert step.reward == 0.0
    assert reward == 1.0
    assert metrics["nenyax/passed"] == 1.0


def test_an_infrastructure_failure_is_a_failed_trajectory_not_a_reward(client, model_folder, monkeypatch):
    """A verifier that breaks gives no reward: the cookbook fails the group (FailFast) or drops that member and
    records the error (MinViableGroup), while the member that was judged keeps its score."""
    task = load(URI).task_ids(limit=1)[0]
    session_class = type(load(URI).session(task=task, seed=0))
    act, broken = session_class.act, []

    def first_breaks(self, action):
        """The verifier breaks on the first session that answers (one member of the group)."""
        broken[:] = broken or [self]
        if self is broken[0]:
            raise RuntimeError("the verifier's service is down")
        return act(self, action)

    monkeypatch.setattr(session_class, "act", first_breaks)
    builder = NenyaxEnvGroupBuilder(URI, task, 2, seed=0, model_name=model_folder, renderer_name=RENDERER)
    policy = TinkerTokenCompleter(client, max_tokens=4, temperature=1.0)  # type: ignore[arg-type]
    with pytest.raises(EpisodeFailed) as failed:
        asyncio.run(do_group_rollout(builder, policy))
    assert failed.value.status is Status.ENV_ERROR

    broken.clear()
    group = asyncio.run(do_group_rollout(builder, policy, strategy=MinViableGroup(min_successful=1, max_retries=0)))
    assert [e.error_type for e in group.rollout_errors] == ["EpisodeFailed"]
    assert "env_error" in group.rollout_errors[0].error_message
    (trajectory,) = group.trajectories_G
    reply = get_text_content(renderer(model_folder, RENDERER).parse_response(trajectory.transitions[0].ac.tokens)[0])
    assert group.final_rewards_G == [nenyax_score(URI, task, 0, reply)]


def test_group_rollout_is_what_was_sampled_and_judged(client, model_folder):
    task = load(URI).task_ids()[1]
    builder = NenyaxEnvGroupBuilder(URI, task, 2, seed=3, model_name=model_folder, renderer_name=RENDERER)
    group = asyncio.run(nenyax_group_rollout(builder, client, max_tokens=8))

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
        assert len(transition.ac.tokens) <= 8
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
