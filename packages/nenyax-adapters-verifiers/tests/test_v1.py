"""The v1 API (verifiers 0.4): an in-memory gsm8k-style Taskset through the null harness in a subprocess."""

import pytest

from nenyax.core import Status, UsageError, check, load
from nenyax_testsupport.policies import Outage, Scripted

pytestmark = pytest.mark.v1

GSM8K = "verifiers:vf-gsm8k-v1"


@pytest.fixture(scope="module")
def gsm8k():
    env = load(GSM8K)
    yield env
    env.close()


def test_a_taskset_id_loads_with_its_data_ids(gsm8k):
    assert gsm8k.manifest.extra["api"] == "v1"
    assert gsm8k.manifest.extra["runtime"] == "subprocess"
    assert gsm8k.task_ids() == ["gsm8k-0", "gsm8k-1", "gsm8k-2"]
    assert gsm8k.manifest.capabilities.reference_policy


def test_taskset_config_fields_come_from_the_uri():
    env = load("verifiers:vf-gsm8k-v1?num_tasks=1")
    assert env.task_ids() == ["gsm8k-0"]


def test_the_reference_boxes_the_answer_and_scores_one(gsm8k):
    traj = gsm8k.rollout("reference", task="gsm8k-2")
    assert traj.status is Status.OK, traj.error
    assert traj.judgment.score == 1.0
    assert traj.judgment.passed is True
    assert traj.judgment.components["correct"] == 1.0
    assert traj.judgment.components["reply_chars"] == len("\\boxed{624}")
    assert traj.model_calls[0].response["content"] == "\\boxed{624}"


def test_a_wrong_answer_scores_zero_and_the_prompt_reaches_the_policy(gsm8k):
    policy = Scripted("\\boxed{71}")
    traj = gsm8k.rollout(policy, task="gsm8k-0")
    assert traj.status is Status.OK, traj.error
    assert traj.judgment.score == 0.0
    assert "48 of her friends" in policy.seen[0][-1]["content"]


def test_an_outage_is_infra_error_unscored(gsm8k):
    traj = gsm8k.rollout(Outage(), task="gsm8k-0")
    assert traj.status is Status.INFRA_ERROR
    assert traj.judgment is None


def test_a_task_that_raises_inside_the_episode_is_env_error():
    env = load("verifiers:vf_odd_v1:RaisingTaskset")
    traj = env.rollout(Scripted("hi"))
    assert traj.status is Status.ENV_ERROR
    assert traj.judgment is None
    assert "broke on purpose" in traj.error


def test_check_reaches_audited_with_an_answer_field():
    report = check("verifiers:vf-gsm8k-v1?num_tasks=2", samples=2)
    assert report.tier.label == "audited", [(r.id, r.outcome, r.evidence) for r in report.results]


def test_check_without_answers_reaches_trainable():
    env = load("verifiers:vf_odd_v1:NoAnswerTaskset")
    assert env.manifest.capabilities.reference_policy is False
    report = check("verifiers:vf_odd_v1:NoAnswerTaskset", samples=2)
    assert report.tier.label == "trainable", [(r.id, r.outcome, r.evidence) for r in report.results]


# ---------------------------------------------------------------- tasksets that bring their own Env

GAME = "verifiers:vf-game-v1"


@pytest.fixture(scope="module")
def game():
    env = load(GAME)
    yield env
    env.close()


def test_a_taskset_with_its_own_env_is_played_by_that_env(game):
    assert game.manifest.extra["env"] == "vf_game_v1.GuessEnv"
    assert game.manifest.extra["seat"] == "player"
    assert game.manifest.capabilities.multi_turn
    policy = Scripted("\\boxed{1}", "\\boxed{5}", "\\boxed{7}")
    traj = game.rollout(policy, task="guess-1")
    assert traj.status is Status.OK, traj.error
    assert len(traj.model_calls) == 3  # the game answered each guess: three moves, not one call
    assert [turn[-1]["content"] for turn in policy.seen[1:]] == ["Higher.", "Higher."]
    assert traj.judgment.score == 1.0
    assert traj.judgment.components == {"game_reward": 1.0}


def test_a_lost_game_scores_what_the_env_recorded(game):
    traj = game.rollout(Scripted("1", "2", "4", "6"), task="guess-1")
    assert traj.status is Status.OK, traj.error
    assert len(traj.model_calls) == 4
    assert traj.judgment.score == 0.0
    assert traj.judgment.components == {"game_reward": 0.0}


def test_naming_the_taskset_class_finds_the_env_beside_it():
    env = load("verifiers:vf_game_v1:GuessTaskset?num_tasks=1")
    assert env.manifest.extra["env"] == "vf_game_v1.GuessEnv"
    traj = env.rollout("reference")
    assert traj.status is Status.OK, traj.error
    assert traj.judgment.components == {"game_reward": 1.0}


def test_check_on_a_game_measures_the_game():
    # One guess a game keeps the floor's many probes (each a full game) as cheap as gsm8k's check; the
    # rollouts above show the turns. On main this reached trainable on a made-up 0 for every policy.
    report = check("verifiers:vf-game-v1?num_tasks=2&turns=1", samples=2)
    assert report.manifest.extra["env"] == "vf_game_v1.GuessEnv"
    assert report.tier.label == "audited", [(r.id, r.outcome, r.evidence) for r in report.results]


def test_a_plain_taskset_is_still_played_by_the_single_agent_env(gsm8k):
    assert gsm8k.manifest.extra["env"] == "verifiers.v1.envs.single_agent.env.SingleAgentEnv"
    assert gsm8k.manifest.extra["harness"] == "null"
    assert not gsm8k.manifest.capabilities.multi_turn


def test_verifiers_own_taskset_ids_resolve_to_its_bundled_tasksets():
    # `textarena` is verifiers.v1.tasksets.textarena, as verifiers' loader resolves it; its extra is missing here.
    with pytest.raises(UsageError) as caught:
        load("verifiers:textarena?game=Wordle-v0")
    assert "verifiers.v1.tasksets.textarena" in str(caught.value)
    assert "verifiers[ta]" in str(caught.value)


def test_an_env_with_two_seats_is_refused_in_one_sentence():
    with pytest.raises(UsageError) as caught:
        load("verifiers:vf_seats_v1:DuoTaskset")
    said = str(caught.value)
    assert "DuoEnv" in said
    assert "solver, critic" in said
    assert "one policy" in said
    assert said.count(". ") == 0


def test_tasks_that_need_a_container_are_refused_in_one_sentence():
    with pytest.raises(UsageError) as caught:
        load("verifiers:vf_odd_v1:BoxedTaskset")
    assert "python:3.11-slim" in str(caught.value)
    assert "container" in str(caught.value)


# ---------------------------------------------------------------- no reward, no score


def test_an_episode_no_reward_judged_has_no_score():
    env = load("verifiers:vf_odd_v1:NoRewardTaskset")
    traj = env.rollout(Scripted("hello"), task="silent-0")
    assert traj.status is Status.VERIFIER_ERROR
    assert traj.judgment is None
    assert "No reward judged the episode" in traj.error


def test_check_on_a_taskset_no_reward_judges_stops_before_evaluable():
    report = check("verifiers:vf_odd_v1:NoRewardTaskset", samples=2)
    assert report.tier.label == "connectable", [(r.id, r.outcome, r.evidence) for r in report.results]
    failed = {r.id: r.evidence for r in report.results if r.outcome.value == "failed"}
    assert "No reward judged the episode" in failed["evaluable/episode-completes"]
