import gymnasium as gym
import numpy as np
import pytest

from nenyax.core import (
    BadURIError,
    EnvironmentFailure,
    Status,
    Tier,
    Trajectory,
    UnsupportedPolicyError,
    check,
    load,
    serde,
)
from nenyax.core.contract import arrays


def balance(observation):
    return 1 if observation[2] + 0.5 * observation[3] > 0 else 0


def test_native_policy_sees_numpy_and_steps_store_json():
    seen = []

    def policy(observation):
        seen.append(observation)
        return balance(observation)

    traj = load("gymnasium:CartPole-v1").rollout(policy, task="CartPole-v1/seed/3")
    assert isinstance(seen[0], np.ndarray)
    assert seen[0].dtype == np.float32
    assert traj.status is Status.OK
    assert traj.task_id == "CartPole-v1/seed/3"
    assert traj.seed == 3
    first = traj.steps[0]
    recorded = first.observation  # core's array encoding: the dtype survives, the numbers read
    assert recorded["__ndarray__"] == "float32"
    assert len(recorded["values"]) == 4
    assert all(type(x) is float for x in recorded["values"])
    np.testing.assert_array_equal(arrays.decode(first.observation), seen[0])
    assert type(first.action) is int
    assert serde.loads(serde.dumps(traj), Trajectory) == traj


def test_same_episode_as_the_raw_gymnasium_loop():
    raw = gym.make("CartPole-v1")
    obs, _ = raw.reset(seed=11)
    rewards, observations, done = [], [], False
    while not done:
        observations.append(obs.tolist())
        obs, reward, terminated, truncated, _ = raw.step(balance(obs))
        rewards.append(float(reward))
        done = terminated or truncated
    traj = load("gymnasium:CartPole-v1").rollout(balance, task="CartPole-v1/seed/11")
    assert [arrays.decode(s.observation).tolist() for s in traj.steps] == observations
    assert traj.score == sum(rewards) == traj.judgment.components["return"]
    assert (traj.steps[-1].terminated, traj.steps[-1].truncated) == (terminated, truncated)


def test_terminated_and_truncated_are_kept_apart():
    env = load("gymnasium:CartPole-v1?max_episode_steps=10")
    alternating = env.rollout(lambda obs: int(abs(obs[0] * 1e6)) % 2, task="CartPole-v1/seed/0")
    cut = alternating.steps[-1]
    assert len(alternating.steps) == 10
    assert (cut.terminated, cut.truncated) == (False, True)
    fell = env.rollout(lambda obs: 1, task="CartPole-v1/seed/0").steps[-1]
    assert (fell.terminated, fell.truncated) == (True, False)


def test_time_limit_is_added_where_gymnasium_registers_none():
    env = load("gymnasium:CliffWalking-v1?max_episode_steps=25")
    traj = env.rollout("null")  # "up" from the start square never ends the episode
    assert len(traj.steps) == 25
    assert traj.steps[-1].truncated
    assert traj.score == -25
    assert load("gymnasium:CliffWalking-v1").manifest.capabilities.max_turns == 1000


def test_task_ids_are_reset_seeds():
    env = load("gymnasium:CartPole-v1?tasks=4")
    assert env.task_ids() == [f"CartPole-v1/seed/{n}" for n in range(4)]
    assert env.task_ids(limit=2) == ["CartPole-v1/seed/0", "CartPole-v1/seed/1"]
    expected, _ = gym.make("CartPole-v1").reset(seed=123456)
    np.testing.assert_array_equal(env.session(task="CartPole-v1/seed/123456").observation, expected)
    np.testing.assert_array_equal(env.session(seed=123456).observation, expected)
    for bad in ("Acrobot-v1/seed/0", "CartPole-v1/seed/x", "CartPole-v1/0"):
        with pytest.raises(BadURIError, match="is not a task"):
            env.session(task=bad)


def test_make_kwargs_come_from_the_query():
    env = load("gymnasium:FrozenLake-v1?is_slippery=false&map_name=8x8")
    assert env.observation_space.n == 64
    assert env.manifest.extra["make_kwargs"] == {"is_slippery": False, "map_name": "8x8"}
    assert env.manifest.capabilities.stochastic is False
    assert load("gymnasium:FrozenLake-v1").manifest.capabilities.stochastic is True


@pytest.mark.parametrize(
    ("uri", "fragment"),
    [
        ("gymnasium:CartPol-v1", "no environment 'CartPol-v1'. Did you mean 'CartPole-v1'"),
        (
            "gymnasium:FrozenLake-v1?is_slipery=false",
            "does not accept the argument 'is_slipery'. Did you mean 'is_slippery'",
        ),
        ("gymnasium:FrozenLake-v1?map_name=9x9", "rejected the arguments"),
        ("gymnasium:CartPole-v1?tasks=0", "tasks .* must be an integer of at least 1"),
        ("gymnasium:CartPole-v1?on_unparseable=guess", "on_unparseable in .* must be one of fail, noop, random"),
        ("gymnasium:CartPole-v1?max_episode_steps=0", "max_episode_steps .* at least 1"),
        ("gymnasium:no_such_module_xyz:Env", "Cannot import the module"),
        (
            "gymnasium:nenyax_test_envs:EverySpace",
            "no gymnasium.Env subclass 'EverySpace'. Did you mean 'EverySpaceEnv'",
        ),
    ],
)
def test_bad_uris_are_one_sentence(uri, fragment):
    with pytest.raises(BadURIError, match=fragment) as info:
        load(uri)
    assert "\n" not in str(info.value)


def test_missing_dependency_is_one_sentence_at_load():
    with pytest.raises(EnvironmentFailure, match="gymnasium cannot make 'Ant-v2' here: The mujoco v2 and v3") as info:
        load("gymnasium:Ant-v2")
    assert "\n" not in str(info.value)


def test_reset_that_raises_is_an_env_error():
    env = load("gymnasium:nenyax_test_envs:BrokenResetEnv")
    task = "nenyax_test_envs:BrokenResetEnv/seed/7"
    traj = env.rollout("null", task=task)
    assert traj.status is Status.ENV_ERROR
    assert traj.judgment is None
    assert "the simulator failed to start" in traj.error
    assert traj.task_id == task
    assert env.rollout("null").status is Status.ENV_ERROR  # the broken env was not handed to the next episode


def test_step_that_raises_keeps_the_steps_before_it():
    traj = load("gymnasium:nenyax_test_envs:BrokenStepEnv").rollout("null")
    assert traj.status is Status.ENV_ERROR
    assert len(traj.steps) == 2
    assert "physics exploded" in traj.error


def test_invalid_native_action_is_the_policys_failure():
    traj = load("gymnasium:CartPole-v1").rollout(lambda obs: 7)
    assert traj.status is Status.POLICY_ERROR
    assert traj.score == 0.0
    assert "not in the action space Discrete(2)" in traj.error


def test_random_policy_replays_per_sample_and_stays_in_the_space():
    env = load("gymnasium:Pendulum-v1?max_episode_steps=20")
    first, second = (env.rollout("random", task="Pendulum-v1/seed/4") for _ in range(2))
    assert [s.action for s in first.steps] == [s.action for s in second.steps]
    assert all(-2.0 <= arrays.decode(s.action)[0] <= 2.0 for s in first.steps)
    other = env.rollouts("random", tasks=["Pendulum-v1/seed/4"], n=2)
    assert [s.action for s in other[0].steps] != [s.action for s in other[1].steps]


def test_null_action_of_a_box_is_zero_torque():
    traj = load("gymnasium:Pendulum-v1?max_episode_steps=5").rollout("null")
    assert [s.action for s in traj.steps] == [{"__ndarray__": "float32", "values": [0.0]}] * 5


def test_reused_box2d_envs_still_replay_a_seed():
    # BipedalWalker's own reset does not clear its physics world: a reused env drifts by the third episode.
    env = load("gymnasium:BipedalWalker-v3?max_episode_steps=150")
    scores = {env.rollout("null", task="BipedalWalker-v3/seed/5").score for _ in range(3)}
    assert len(scores) == 1
    assert env.manifest.extra["reuses_envs"] is False


@pytest.mark.parametrize(
    ("uri", "score"),
    [
        ("gymnasium:FrozenLake-v1?is_slippery=false", 1.0),
        ("gymnasium:FrozenLake-v1?is_slippery=false&map_name=8x8", 1.0),
        ("gymnasium:CliffWalking-v1", -13.0),
    ],
)
def test_planner_reference_is_optimal_on_deterministic_tables(uri, score):
    env = load(uri)
    traj = env.rollout("reference")
    assert traj.score == score
    assert traj.judgment.passed is not False
    assert env.manifest.capabilities.reference_policy
    assert not env.manifest.capabilities.stochastic


def test_taxi_reference_delivers_every_passenger():
    env = load("gymnasium:Taxi-v4")
    scores = [env.rollout("reference", task=t).score for t in env.task_ids(limit=10)]
    assert all(s > 0 for s in scores)
    assert env.manifest.capabilities.stochastic is False


def test_fickle_taxi_has_no_reference():
    env = load("gymnasium:Taxi-v4?fickle_passenger=true")
    assert env.manifest.capabilities.reference_policy is False
    with pytest.raises(UnsupportedPolicyError, match="fickle passenger"):
        env.rollout("reference")


def test_slippery_frozenlake_is_audited_as_stochastic():
    report = check("gymnasium:FrozenLake-v1", samples=5)
    assert report.tier is Tier.AUDITED
    assert report.manifest.capabilities.stochastic
    assert "Stochastic" in next(r.evidence for r in report.results if r.id == "audited/reference-beats-null")


def test_blackjack_is_trainable_and_says_why_not_audited():
    report = check("gymnasium:Blackjack-v1", samples=2)
    assert report.tier is Tier.TRAINABLE
    assert report.manifest.capabilities.stochastic
    assert "No oracle" in report.manifest.extra["reference"]


def test_judgment_passes_against_the_reward_threshold():
    env = load("gymnasium:CartPole-v1")
    assert env.rollout(balance, task="CartPole-v1/seed/0").judgment.passed is True  # 500 >= 475
    assert env.rollout("null").judgment.passed is False
