"""Bad input against real OpenEnv servers: down, not OpenEnv, at capacity, dropping mid-episode, rejecting actions."""

import asyncio
import socket

import pytest

from nenyax.core import BadURIError, InfraFailure, Status, Tier, TierOutcome, check, load


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_server_that_is_down_is_one_sentence_naming_the_url():
    port = free_port()
    with pytest.raises(InfraFailure) as caught:
        load(f"openenv:ws://127.0.0.1:{port}")
    text = str(caught.value)
    assert text.startswith(f"Cannot reach the OpenEnv server at http://127.0.0.1:{port} (")
    assert text.endswith("start it or correct the URL.")
    assert "\n" not in text


def test_check_of_a_server_that_is_down_skips_connectable_with_the_reason():
    port = free_port()
    report = check(f"openenv:ws://127.0.0.1:{port}")
    loads = report.results[0]
    assert report.tier is Tier.NONE
    assert loads.id == "connectable/loads"
    assert loads.outcome is TierOutcome.SKIPPED
    assert f"Cannot reach the OpenEnv server at http://127.0.0.1:{port}" in loads.evidence


def test_a_server_that_is_not_openenv_is_a_user_error(servers):
    with pytest.raises(BadURIError) as caught:
        load(servers.uri("seeded").replace("/ws", "") + "/not-here")
    assert "has no /health or /schema route, so it is not an OpenEnv server" in str(caught.value)


def test_a_server_dropping_the_connection_mid_episode_is_infra_error_and_keeps_the_steps(own_server):
    env = load(own_server.uri("seeded"))
    guesses = iter([50, 60])

    def policy(observation):
        guess = next(guesses)
        if guess == 60:
            own_server.stop()  # SIGKILL: the server vanishes between two steps
        return {"guess": guess}

    traj = env.rollout(policy, task="seed/7")
    assert traj.status is Status.INFRA_ERROR
    assert traj.judgment is None
    assert not traj.status.trainable
    assert [s.action for s in traj.steps] == [{"guess": 50}, {"guess": 60}]
    assert traj.steps[0].observation["hint"] == "guess a number"
    assert "error" not in traj.steps[0].info
    assert f"ws://127.0.0.1:{own_server.ports['seeded']}/ws" in traj.steps[1].info["error"]
    assert traj.error.startswith("InfraFailure: ")


def test_a_server_at_capacity_is_waited_for_then_infra_error(servers):
    patient = load(servers.uri("single", "capacity_wait=20&reference=solution"))
    hasty = load(servers.uri("single", "capacity_wait=0.3"))

    async def main():
        holder = await patient.asession(task="seed/1")
        refused = await hasty.arollout("null", task="seed/2")
        waiting = asyncio.ensure_future(patient.arollout("reference", task="seed/7"))
        await asyncio.sleep(0.3)
        assert not waiting.done()
        await holder.aclose()  # frees the server's only session: the waiting episode gets it
        return refused, await waiting

    refused, served = asyncio.run(main())
    assert refused.status is Status.INFRA_ERROR
    assert refused.judgment is None
    assert refused.steps == ()
    assert "is at capacity (Server at capacity: 1/1 sessions active" in refused.error
    assert refused.error.endswith("and stayed so for 0.3 s.")
    assert served.status is Status.OK
    assert served.score == 1.0


def test_an_action_the_server_rejects_is_policy_error_with_the_servers_message(servers):
    traj = load(servers.uri("seeded")).rollout(lambda observation: {"guess": 13}, task="seed/7")
    assert traj.status is Status.POLICY_ERROR
    assert traj.score == 0.0
    message = "The server rejected the action {'guess': 13}: guess: the server refuses 13: it is unlucky."
    assert traj.steps[0].info["error"] == message
    assert traj.error == f"PolicyFailure: {message}"


def test_an_action_outside_the_schema_is_refused_before_sending(servers):
    traj = load(servers.uri("seeded")).rollout(lambda observation: {"guess": 500}, task="seed/7")
    assert traj.status is Status.POLICY_ERROR
    assert traj.score == 0.0
    assert traj.steps[0].info["error"] == (
        'The action {"guess": 500} does not fit the server\'s action schema: guess: 500 is greater than the maximum of 100.'
    )


def test_an_unreadable_chat_reply_is_policy_error_and_keeps_the_text(servers, chat):
    chat = chat("I would go higher.")
    traj = load(servers.uri("seeded")).rollout(chat, task="seed/7")
    assert traj.status is Status.POLICY_ERROR
    assert traj.score == 0.0
    assert traj.steps[0].text == "I would go higher."
    assert traj.steps[0].action is None
    assert traj.steps[0].info["error"].startswith("Could not read an action from the reply: no JSON action was found;")
