"""Bad input: servers down or dropping, malformed results, rejected calls, broken tools, bad URIs."""

import threading

import pytest
from cutting_proxy import CuttingProxy
from servers import Served, free_port

from nenyax.core import BadURIError, InfraFailure, Status, Tier, TierOutcome, check, load


@pytest.fixture(scope="module")
def faulty():
    with Served("faulty_server.py") as served:
        yield load(f"ors:{served.url}/faultyenv")


def _call(name):
    return lambda _obs: {"name": name, "input": {}}


def test_a_server_that_is_down_is_one_sentence_naming_the_url():
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(InfraFailure) as info:
        load(f"ors:{url}/mathenv")
    text = str(info.value)
    assert text == f"Cannot reach the ORS server at {url} (connection refused); is it running there?"


def test_check_of_a_server_that_is_down_skips_connectable_with_the_reason():
    url = f"http://127.0.0.1:{free_port()}"
    report = check(f"ors:{url}/mathenv", samples=1)
    loads = report.results[0]
    assert loads.outcome is TierOutcome.SKIPPED
    assert url in loads.evidence
    assert "connection refused" in loads.evidence
    assert not report.failed
    assert report.tier is Tier.NONE


def test_a_server_killed_mid_episode_is_infra_error_with_the_episode_kept(fresh_ors_server):
    env = load(f"ors:{fresh_ors_server.url}/mathenv")

    def policy(observation):
        if "prompt" in observation:
            return {"name": "hint"}
        fresh_ors_server.stop()  # the server dies between two calls
        return {"name": "submit", "input": {"answer": "4"}}

    traj = env.rollout(policy, task="test/0")
    assert traj.status is Status.INFRA_ERROR
    assert traj.judgment is None
    assert not traj.status.trainable
    hint, lost = traj.steps
    assert hint.info["output"]["blocks"][0]["text"] == "Compute it step by step."
    # Refused or cut mid-call depends on how far the dying server got; either way the error names it.
    assert lost.action == {"name": "submit", "input": {"answer": "4"}}
    assert fresh_ors_server.url in lost.info["error"]
    assert fresh_ors_server.url in traj.error


def test_a_stream_dropped_while_the_tool_runs_is_resumed_and_then_given_up(fresh_ors_server):
    env = load(f"ors:{fresh_ors_server.url}/mathenv")
    # The clock starts when the policy acts, not before the episode: a loaded machine may take longer than
    # the delay to reset, and the server must die while the 5-second tool runs.
    killer = threading.Timer(0.5, fresh_ors_server.stop)

    def policy(_obs):
        killer.start()
        return {"name": "slow", "input": {"seconds": 5}}

    traj = env.rollout(policy, task="test/0")
    killer.join()
    assert traj.status is Status.INFRA_ERROR
    assert traj.judgment is None
    [step] = traj.steps
    error = step.info["error"]
    assert step.action["name"] == "slow"
    assert "dropped during the call to 'slow' (the response was cut off" in error
    assert "resuming task" in error
    assert "failed 3 times (last: connection refused)" in error


def test_a_stream_cut_once_is_resumed_by_task_id_without_running_the_tool_twice(ors_server):
    with CuttingProxy(ors_server.port) as proxy:
        env = load(f"ors:http://127.0.0.1:{proxy.port}/mathenv")
        slow_then_submit = [{"name": "slow", "input": {"seconds": 0.3}}, {"name": "submit", "input": {"answer": "4"}}]
        traj = env.rollout(lambda _obs: slow_then_submit.pop(0), task="test/0", timeout=30)
        assert proxy.cuts == 1
        assert proxy.connections >= 2
    assert traj.status is Status.OK, traj.error
    assert traj.score == 1.0, traj.error
    assert traj.steps[0].info["output"]["metadata"] == {"runs": 1}


@pytest.mark.parametrize(
    ("tool", "sentence"),
    [
        ("nan", "returned the non-finite reward nan for the call to 'nan'; it is recorded here and never scored"),
        ("inf", "returned the non-finite reward inf for the call to 'inf'"),
        ("garbage", "sent a malformed result for the call to 'garbage' (not JSON): '{this is not json'"),
        ("string_reward", "(the reward is str, not a number)"),
        (
            "not_utf8",
            "sent a malformed event stream for the call to 'not_utf8': a line of the event stream is not UTF-8",
        ),
    ],
)
def test_a_non_finite_reward_or_malformed_frame_is_recorded_and_never_scored(faulty, tool, sentence):
    traj = faulty.rollout(_call(tool))
    assert traj.status is Status.VERIFIER_ERROR
    assert traj.judgment is None
    assert not traj.status.trainable
    [step] = traj.steps
    assert step.action == {"name": tool, "input": {}}
    assert sentence in step.info["error"]


def test_a_connection_closed_before_the_task_id_is_not_retried(faulty):
    traj = faulty.rollout(_call("vanish"))
    assert traj.status is Status.INFRA_ERROR
    assert traj.judgment is None
    assert "before the server named its task" in traj.steps[0].info["error"]


def test_the_faulty_server_is_otherwise_sound(faulty):
    assert faulty.rollout(_call("submit")).score == 1.0


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ({"name": "nope", "input": {}}, "The ORS server rejected the call to 'nope': 'nope' is not a valid tool."),
        ({"name": "submit", "input": {}}, "The ORS server rejected the call to 'submit': Tool input validation error"),
        ("submit", "An ORS action is a tool call"),
        ({"name": "submit", "input": {"answer": float("nan")}}, "is not JSON"),
    ],
)
def test_a_call_the_server_rejects_is_policy_error_with_its_message(ors_server, action, message):
    traj = load(f"ors:{ors_server.url}/mathenv").rollout(lambda _obs: action)
    assert traj.status is Status.POLICY_ERROR
    assert traj.score == 0.0
    assert traj.error.startswith("PolicyFailure: ")
    assert message in traj.error


def test_a_tool_that_crashes_on_the_server_is_env_error(ors_server):
    traj = load(f"ors:{ors_server.url}/brokenenv").rollout("reference")
    assert traj.status is Status.ENV_ERROR
    assert traj.judgment is None
    assert "reports that the call to 'submit' failed: the grader crashed" in traj.error


@pytest.mark.parametrize(
    ("uri", "sentence"),
    [
        (
            "ors:mathenv",
            "'mathenv' is not an ORS server address; write the URI as 'ors:http://host:port/<environment>'.",
        ),
        ("ors:http://127.0.0.1:99999/m", "The port in 'http://127.0.0.1:99999/m' is not a number from 0 to 65535."),
        ("ors:http://127.0.0.1:1/m?max_turn=3", "The ors adapter has no option 'max_turn'. Did you mean 'max_turns'?"),
        (
            "ors:http://127.0.0.1:1/m?max_turns=0",
            "max_turns in 'ors:http://127.0.0.1:1/m?max_turns=0' must be an integer",
        ),
    ],
)
def test_bad_uris_are_one_sentence(uri, sentence):
    with pytest.raises(BadURIError) as info:
        load(uri)
    assert str(info.value).startswith(sentence)
    assert "\n" not in str(info.value)


def test_a_session_the_server_no_longer_holds_is_infra_error(ors_server):
    import asyncio
    import urllib.request

    env = load(f"ors:{ors_server.url}/mathenv")

    async def main():
        session = await env.asession(task="test/0")
        try:
            # As when the server restarts or reaps a session idle for 900 s: it is gone server-side.
            request = urllib.request.Request(
                ors_server.url + "/delete", method="POST", headers={"X-Session-ID": session.sid}
            )
            await asyncio.to_thread(urllib.request.urlopen, request)
            await session.aact({"name": "hint"})
        finally:
            await session.aclose()

    with pytest.raises(InfraFailure, match="no longer holds this episode's session \\(Active environment not found\\)"):
        asyncio.run(main())
