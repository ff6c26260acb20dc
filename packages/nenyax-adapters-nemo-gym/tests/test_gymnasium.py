"""Gymnasium-style resources servers (nemo-gym's GymnasiumServer: /reset and /step), played as gymnasium_agent does,
and the servers the adapter cannot play, refused in one sentence."""

import pytest
from nemo_gym_helpers import uri

from nenyax.core import EnvironmentFailure, Status, UsageError, load

STAND = "I stand. <action>stand</action>"


def _one_sentence(text):
    return text and "\n" not in text and text.rstrip().endswith((".", "?", ")"))


def test_blackjack_by_name_is_played_over_reset_and_step(nemo_python):
    env = load("nemo_gym:blackjack")
    try:
        manifest = env.manifest
        assert manifest.extra["protocol"] == "gymnasium"
        assert "/reset" in manifest.description
        # gymnasium_agent's max_steps from blackjack's own config (5), not simple_agent's one answer.
        assert manifest.capabilities.max_turns == 5
        assert manifest.capabilities.multi_turn
        assert not manifest.capabilities.reference_policy  # its rows hold no gold answer
        traj = env.rollout(lambda _: STAND, task="example/0")
        assert traj.status is Status.OK, traj.error
        [step] = traj.steps
        assert step.terminated
        # The reset observation (the dealt hand) joins the row's prompt, as gymnasium_agent adds it.
        assert step.observation[-1]["role"] == "user"
        assert step.observation[-1]["content"].startswith("Your hand: ")
        result = step.info["step"]["result"]
        assert result in {"win", "draw", "loss"}
        assert traj.score == {"win": 1.0, "draw": 0.0, "loss": -1.0}[result]
        assert traj.judgment.judge == "nemo_gym:blackjack/step"
        assert traj.judgment.feedback == f"result: {result}"
        assert traj.judgment.components["dealer_value"] >= 17
    finally:
        env.close()


def test_an_episode_that_keeps_hitting_ends_on_a_bust_or_out_of_turns(nemo_python):
    env = load("nemo_gym:blackjack?max_turns=2")
    try:
        for task in env.task_ids():
            traj = env.rollout(lambda _: "<action>hit</action>", task=task)
            assert traj.status is Status.OK, traj.error
            last = traj.steps[-1]
            assert last.done
            if last.terminated:
                assert last.info["step"]["result"] == "bust"
                assert traj.score == -1.0
            else:  # neither bust in two hits: cut where gymnasium_agent's max_steps cuts, the sum of rewards so far
                assert len(traj.steps) == 2
                assert last.truncated
                assert "out of turns" in last.info["cut"]
                assert traj.score == 0.0
            # A hit that does not bust shows the new hand as the next observation.
            for before, after in zip(traj.steps, traj.steps[1:], strict=False):
                assert not before.done
                assert after.observation[0]["content"].startswith("Your hand: ")
    finally:
        env.close()


def test_a_running_gymnasium_server_is_recognised_by_its_routes(blackjack):
    env = load(uri(blackjack))
    try:
        assert env.manifest.extra["protocol"] == "gymnasium"
        assert env.manifest.capabilities.max_turns == 10  # gymnasium_agent's default: a running server has no config
        traj = env.rollout("null", task="example/1")
        assert traj.status is Status.OK, traj.error
        assert traj.steps[-1].terminated  # an empty reply stands
        assert traj.score in {-1.0, 0.0, 1.0}
    finally:
        env.close()


def test_the_scripted_multi_turn_example_scores_the_reference_and_not_the_null(nemo_python):
    env = load("nemo_gym:example_multi_turn_gymnasium")
    try:
        assert env.manifest.capabilities.reference_policy  # expected_answer in every row
        ref = env.rollout("reference", task="example/0")
        assert ref.status is Status.OK, ref.error
        assert ref.score == 1.0
        # The server's follow-up questions are the observations of the turns after the first.
        follow_ups = env.rows[0]["follow_ups"]
        assert [s.observation[-1]["content"] for s in ref.steps[1:]] == follow_ups
        assert [s.done for s in ref.steps] == [False] * len(follow_ups) + [True]
        null = env.rollout("null", task="example/0")
        assert null.status is Status.OK
        assert null.score == 0.0
    finally:
        env.close()


def test_a_server_played_by_an_agent_nenyax_does_not_speak_is_one_sentence(nemo_python):
    with pytest.raises(UsageError) as caught:
        load("nemo_gym:aviary")
    text = str(caught.value)
    assert "aviary_agent" in text
    assert "gymnasium_agent" in text
    assert _one_sentence(text), text


def test_a_running_server_with_neither_protocol_is_one_sentence(neither, tmp_path):
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"responses_create_params": {"input": "hi"}}\n')
    with pytest.raises(UsageError) as caught:
        load(f"nemo_gym:{neither.url}?rows={rows}")
    text = str(caught.value)
    assert "neither simple_agent" in text
    assert "/act" in text
    assert _one_sentence(text), text


@pytest.mark.parametrize("server", ["grl_sokoban", "tales"])
def test_a_server_missing_its_own_requirements_names_the_file(nemo_python, server):
    """The test venv has nemo-gym without these servers' requirements (gymnasium, gym-sokoban, tale-suite)."""
    with pytest.raises(EnvironmentFailure) as caught:
        load(f"nemo_gym:{server}")
    text = str(caught.value)
    assert f"resources_servers/{server}/requirements.txt" in text
    assert "It needs the module '" in text
    assert "install the server's own requirements" in text
