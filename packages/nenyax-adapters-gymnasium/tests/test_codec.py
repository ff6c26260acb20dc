import json
import re

import numpy as np
import pytest
from gymnasium import spaces

from nenyax.adapters.gymnasium import codec
from nenyax.adapters.gymnasium.spaces import to_json
from nenyax.core import PolicyFailure, Status, Trajectory, UnsupportedPolicyError, load, serde


def test_first_turn_has_the_system_prompt_then_only_observations():
    session = load("gymnasium:CartPole-v1").session(seed=0)
    first = session.render()
    assert [m["role"] for m in first] == ["system", "user"]
    system = first[0]["content"]
    assert "<action></action>" in system
    assert "0 = push_left, 1 = push_right" in system
    assert first[1]["content"].startswith("Observation: [")
    session.act(1)
    again = session.render()
    assert [m["role"] for m in again] == ["user"]
    assert "Reward for your last action: 1." in again[0]["content"]


def test_a_chat_policy_plays_cartpole_through_the_codec(chat):
    def reply(turn):
        # Parse the observation back out of the last message, as a model would read it.
        observation = json.loads(turn.messages[-1]["content"].split("Observation: ")[1].splitlines()[0])
        return f"The pole leans {observation[2]:+.3f}.\n<action>{1 if observation[2] > 0 else 0}</action>"

    traj = load("gymnasium:CartPole-v1?max_episode_steps=30").rollout(chat(reply), task="CartPole-v1/seed/2")
    assert traj.status is Status.OK
    assert traj.score > 20
    assert traj.messages[0]["role"] == "system"
    assert traj.messages[2]["role"] == "assistant"
    assert traj.steps[0].text.startswith("The pole leans")
    # Every action played is the one the reply named.
    assert [s.action for s in traj.steps] == [int(re.search(r"<action>(\d)</action>", s.text)[1]) for s in traj.steps]
    assert serde.loads(serde.dumps(traj), Trajectory) == traj


def test_action_names_and_the_ansi_picture(chat):
    env = load("gymnasium:FrozenLake-v1?is_slippery=false")
    script = iter(["down", "down", "right", "right", "<action>DOWN</action>", "I pick <action>right</action>"])
    player = chat(lambda turn: next(script))
    traj = env.rollout(player)
    assert [s.action for s in traj.steps] == [1, 1, 2, 2, 1, 2]
    assert traj.score == 1.0
    assert "[S]FFF" in player.seen[0][1]["content"]  # the agent is marked on the map


def test_unparseable_reply_is_a_policy_error_that_keeps_the_reply(chat):
    traj = load("gymnasium:CartPole-v1").rollout(chat("I would rather not move."))
    assert traj.status is Status.POLICY_ERROR
    assert traj.score == 0.0
    step = traj.steps[-1]
    assert step.action is None
    assert step.text == "I would rather not move."
    assert step.info["error"].startswith("Could not read an action from the reply")
    assert "\n" not in step.info["error"]
    assert traj.messages[-1]["role"] == "assistant"


@pytest.mark.parametrize(("mode", "action"), [("noop", 0), ("random", None)])
def test_unparseable_reply_can_play_a_recorded_fallback(chat, mode, action):
    env = load(f"gymnasium:CartPole-v1?on_unparseable={mode}&max_episode_steps=5&retries=0")
    traj = env.rollout(chat("no idea"))
    assert traj.status is Status.OK
    assert len(traj.steps) == 5
    assert all(s.info["fallback"] == mode and "Could not read" in s.info["unparseable"] for s in traj.steps)
    if action is not None:
        assert {s.action for s in traj.steps} == {action}


def test_box_replies_are_bounded(chat):
    env = load("gymnasium:Pendulum-v1?max_episode_steps=3")
    assert env.rollout(chat("<action>0.5</action>")).steps[0].action["values"] == [0.5]
    assert env.rollout(chat("<action>[-1.25]</action>")).steps[0].action["values"] == [-1.25]
    out = env.rollout(chat("<action>5</action>"))
    assert out.status is Status.POLICY_ERROR
    assert "'5' is outside the action space" in out.error


def test_every_space_type_round_trips_through_the_codec(chat):
    env = load("gymnasium:nenyax_test_envs:EverySpaceEnv")
    session = env.session(seed=1)
    prompt = session.render()[0]["content"]
    for key in ("'choice'", "'push'", "'dials'", "'switches'", "'pair'", "0s and 1s", "a JSON string"):
        assert key in prompt
    reply = (
        '<action>{"choice": 2, "push": [0.5, -1], "dials": [1, 3], "switches": [1, 0, 1], "pair": [1, "ab"]}</action>'
    )
    action = session.parse_action(reply)
    assert env.action_space.contains(action)
    assert to_json(env.action_space, action, plain=True) == {
        "choice": 2,
        "push": [0.5, -1.0],
        "dials": [1, 3],
        "switches": [1, 0, 1],
        "pair": [1, "ab"],
    }
    for bad in ('{"choice": 9}', '<action>{"choice": 2}</action>', "<action>[1, 2]</action>"):
        with pytest.raises(PolicyFailure, match="Could not read an action"):
            session.parse_action(bad)
    traj = env.rollout(chat(reply))
    assert traj.status is Status.OK
    assert len(traj.steps) == 3
    assert traj.steps[0].info == {"t": 1, "tag": [1, 2]}
    assert serde.loads(serde.dumps(traj), Trajectory) == traj


def test_text_action_space_takes_the_reply_itself(chat):
    env = load("gymnasium:nenyax_test_envs:TupleTextEnv")
    assert env.rollout(chat("<action>xyzx</action>")).score == 4.0
    assert env.rollout(chat("zz")).score == 2.0
    assert env.rollout(chat("<action>hello</action>")).status is Status.POLICY_ERROR


def test_a_space_the_codec_cannot_render_is_said_at_load_and_before_any_step(chat):
    env = load("gymnasium:nenyax_test_envs:GraphEnv")
    assert env.manifest.extra["text_codec"].startswith("The text codec cannot render the Graph observation space")
    assert env.rollout("null").status is Status.OK  # native policies still play it
    with pytest.raises(UnsupportedPolicyError, match="cannot render the Graph"):
        env.rollout(chat("<action>0</action>"))


def test_images_are_too_large_for_the_codec():
    problem = codec.codec_problem(spaces.Box(0, 255, (96, 96, 3), np.uint8), spaces.Discrete(5))
    assert problem
    assert "27648 numbers" in problem
    assert "\n" not in problem


@pytest.mark.parametrize(
    ("space", "text", "expected"),
    [
        (spaces.Discrete(3, start=-1), "I choose -1", -1),
        (spaces.Discrete(4), "<action>\n```json\n3\n```\n</action>", 3),
        (spaces.MultiBinary(2), "thinking\n[1, 0]", [1, 0]),
        (spaces.MultiDiscrete([3, 3]), "<action>[2, 0]</action>", [2, 0]),
        (spaces.Box(-1, 1, (2, 2)), "<action>[[0, 0.5], [1, -1]]</action>", [[0.0, 0.5], [1.0, -1.0]]),
        (spaces.Tuple((spaces.Discrete(2), spaces.Box(0, 1, ()))), "<action>[1, 0.25]</action>", [1, 0.25]),
    ],
)
def test_parse_each_space(space, text, expected):
    assert to_json(space, codec.parse(space, text), plain=True) == expected


@pytest.mark.parametrize(
    ("space", "text"),
    [
        (spaces.MultiDiscrete([3, 3]), "<action>[2, 0.5]</action>"),
        (spaces.MultiBinary(2), "<action>[1, 2]</action>"),
        (spaces.Box(-1, 1, (2,)), "<action>[0, NaN]</action>"),
        (spaces.Box(-1, 1, (2,)), "<action>[0, 0, 0]</action>"),
        (spaces.Discrete(2), "<action>true</action>"),
    ],
)
def test_parse_refuses_values_outside_the_space(space, text):
    with pytest.raises(PolicyFailure):
        codec.parse(space, text)


def test_an_unparseable_reply_is_retried_with_the_parsers_error_as_feedback(chat):
    replies = iter(["I'd go somewhere", "still thinking", "<action>right</action>"])
    player = chat(lambda turn: next(replies, "<action>down</action>"))
    env = load("gymnasium:FrozenLake-v1?is_slippery=false&retries=2")
    traj = env.rollout(player, task="FrozenLake-v1/seed/0")
    assert traj.status is Status.OK
    first = traj.steps[:3]
    assert [s.action for s in first] == [None, None, 2]
    assert [s.info.get("retry") for s in first] == [True, True, None]
    assert all(s.observation == 0 for s in first)  # a retry is a turn, not an env step
    feedback = player.seen[1][-1]["content"]
    assert feedback.startswith("Your last reply was not a valid action: Could not read an action from the reply")
    assert "Observation: 0" in feedback
    assert len(player.seen) == len(traj.steps)  # one model reply per recorded turn


def test_retries_are_bounded_per_action_then_the_episode_is_a_policy_error(chat):
    traj = load("gymnasium:FrozenLake-v1?retries=2").rollout(chat("no idea"))
    assert traj.status is Status.POLICY_ERROR
    assert len(traj.steps) == 3
    assert traj.score == 0.0
    assert [bool(s.info.get("retry")) for s in traj.steps] == [True, True, False]
    default = load("gymnasium:FrozenLake-v1").rollout(chat("no idea"))
    assert len(default.steps) == 4  # three retries by default, then the failure


def test_retries_do_not_use_up_the_time_limit(chat):
    # Every action is right after one bad reply: 6 env steps and 6 retries fit a limit of 6 env steps.
    replies = iter(["hmm", "<action>1</action>"] * 50)
    env = load("gymnasium:CartPole-v1?max_episode_steps=6&retries=1")
    traj = env.rollout(chat(lambda turn: next(replies)))
    assert traj.status is Status.OK
    assert len(traj.steps) == 12
    assert sum(1 for s in traj.steps if s.action is not None) == 6
    assert traj.steps[-1].truncated


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        (
            "gymnasium:FrozenLake-v1",
            ["<action>left</action>", "<action>down</action>", "<action>right</action>", "<action>up</action>"],
        ),
        ("gymnasium:CartPole-v1", ["<action>push_left</action>", "<action>push_right</action>"]),
        (
            "gymnasium:nenyax_test_envs:OffsetChoiceEnv",
            ["<action>-1</action>", "<action>0</action>", "<action>1</action>"],
        ),
    ],
)
def test_reply_choices_name_each_discrete_action_as_the_parser_reads_it(uri, expected):
    session = load(uri).session(seed=0)
    choices = session.reply_choices()
    assert choices == expected
    low = int(session.env.action_space.start)
    assert [int(session.parse_action(choice)) for choice in choices] == list(range(low, low + len(choices)))


def test_continuous_or_large_action_spaces_offer_no_reply_choices():
    assert load("gymnasium:Pendulum-v1").session(seed=0).reply_choices() is None
