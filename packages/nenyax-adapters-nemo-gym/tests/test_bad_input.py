"""Bad input: a server that is down or dies mid-episode, malformed or non-finite verify answers,
actions the server rejects, and URI mistakes, each one clear sentence or a classified episode."""

import os
import signal
import socket

import pytest
from nemo_gym_helpers import question, uri, write_rows

from nenyax.adapters.nemo_gym import launcher
from nenyax.core import BadURIError, InfraFailure, Status, Tier, TierOutcome, UsageError, check, load


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _one_sentence(text):
    return text and "\n" not in text and text.rstrip().endswith((".", "?", ")"))


@pytest.fixture
def rows(tmp_path):
    return write_rows(tmp_path / "rows.jsonl", [question(expected_answer="yes")])


def test_a_server_that_is_down_is_one_sentence_naming_the_url(rows):
    url = f"http://127.0.0.1:{_free_port()}"
    with pytest.raises(InfraFailure) as caught:
        load(f"nemo_gym:{url}?rows={rows}")
    assert url in str(caught.value)
    assert _one_sentence(str(caught.value))
    report = check(f"nemo_gym:{url}?rows={rows}")
    loads = report.results[0]
    assert report.tier is Tier.NONE
    assert loads.outcome is TierOutcome.SKIPPED
    assert url in loads.evidence


def test_a_server_killed_mid_episode_is_infra_error_and_the_episode_is_kept(nemo_python, rows):
    server = launcher.start_server(nemo_python, server="mcqa")
    try:
        env = load(uri(server))

        def answer_after_the_server_dies(_observation):
            os.kill(server.process.pid, signal.SIGKILL)
            server.process.wait()
            return "\\boxed{B}"

        traj = env.rollout(answer_after_the_server_dies, task="example/0")
        env.close()
    finally:
        server.stop()
    assert traj.status is Status.INFRA_ERROR
    assert traj.judgment is None
    assert not traj.status.trainable
    assert server.url in traj.error
    [step] = traj.steps
    assert step.action == "\\boxed{B}"
    assert server.url in step.info["error"]


def test_a_dropped_connection_during_verify_is_infra_error(doomed, tmp_path):
    path = write_rows(tmp_path / "drop.jsonl", [question(misbehave="drop")])
    env = load(uri(doomed, rows=path))
    traj = env.rollout("null")
    env.close()
    assert traj.status is Status.INFRA_ERROR
    assert traj.judgment is None
    assert "dropped the connection during POST /verify" in traj.error
    assert len(traj.steps) == 1


@pytest.mark.parametrize(
    ("how", "says"),
    [
        ("nan", "non-finite reward nan"),
        ("infinity", "non-finite reward inf"),
        ("not_json", "not JSON"),
        ("no_reward", "without a numeric reward"),
        ("string_reward", "without a numeric reward (reward='1.0')"),
        ("crash", "failed with 500"),
        ("masked", "masked the sample (failure_kind 'judge_unavailable', failure_reason '429')"),
    ],
)
def test_a_malformed_or_non_finite_verify_is_recorded_and_never_scored(misbehaving, tmp_path, how, says):
    path = write_rows(tmp_path / f"{how}.jsonl", [question(misbehave=how)])
    env = load(uri(misbehaving, rows=path))
    traj = env.rollout("null")
    env.close()
    assert traj.status is Status.VERIFIER_ERROR
    assert traj.judgment is None
    assert not traj.status.trainable
    assert says in traj.error
    assert _one_sentence(traj.error.split(": ", 1)[1])
    [step] = traj.steps
    assert step.action == ""
    assert says in step.info["error"]


def test_the_misbehaving_server_does_score_a_well_behaved_row(misbehaving, tmp_path):
    path = write_rows(tmp_path / "fine.jsonl", [question()])
    env = load(uri(misbehaving, rows=path))
    assert env.rollout("null").score == 1.0
    env.close()


def test_a_server_grading_the_whole_reply_fails_the_reference_and_check_says_to_send_the_gold(misbehaving, tmp_path):
    rows = [question(misbehave="whole", expected_answer=str(n)) for n in (41, 42, 43)]
    path = write_rows(tmp_path / "whole.jsonl", rows)
    report = check(uri(misbehaving, rows=path))
    [audit] = [r for r in report.results if r.id == "audited/reference-beats-null"]
    assert audit.outcome is TierOutcome.FAILED
    assert "the reference scored 0" in audit.evidence
    assert "load with ?reference={gold}" in audit.evidence
    env = load(uri(misbehaving, rows=path) + "&reference={gold}")
    gold = env.rollout("reference")
    env.close()
    assert gold.score == 1.0
    assert "reference" not in gold.judgment.feedback


def test_a_tool_call_the_server_rejects_is_policy_error_with_its_message(counter):
    env = load(uri(counter))
    bad = env.rollout(lambda _: {"name": "increment_counter", "arguments": {"count": "lots"}}, task="example/0")
    unknown = env.rollout(lambda _: {"name": "launch_rockets", "arguments": {}}, task="example/0")
    reserved = env.rollout(lambda _: {"name": "verify", "arguments": {}}, task="example/0")
    shapeless = env.rollout(lambda _: 42, task="example/0")
    env.close()
    assert bad.status is Status.POLICY_ERROR
    assert bad.score == 0.0
    assert "rejected the call to 'increment_counter' (422)" in bad.error
    assert "count: Input should be a valid integer" in bad.error
    assert unknown.status is Status.POLICY_ERROR
    assert "no tool 'launch_rockets' (404" in unknown.error
    assert reserved.status is Status.POLICY_ERROR
    assert "'verify' is not a tool name" in reserved.error
    assert shapeless.status is Status.POLICY_ERROR
    assert "not int" in shapeless.error


def test_tool_errors_feedback_hands_the_rejection_to_the_policy_like_simple_agent(counter):
    env = load(uri(counter, tool_errors="feedback", max_turns=2))
    traj = env.rollout(lambda _: {"name": "increment_counter", "arguments": {"count": "lots"}}, task="example/0")
    env.close()
    assert traj.status is Status.OK
    assert len(traj.steps) == 2
    assert "valid integer" in traj.steps[0].info["tool_output"]
    assert traj.steps[1].observation[0]["type"] == "function_call_output"


def test_a_reply_with_a_broken_tool_call_is_policy_error(counter):
    from nenyax.core import PolicyFailure

    env = load(uri(counter))
    session = env.session(task="example/0")
    with pytest.raises(PolicyFailure, match="not JSON"):
        session.parse_action("<tool_call>{name: increment_counter}</tool_call>")
    session.close()
    env.close()


@pytest.fixture(scope="module")
def warm_mcqa(nemo_python):
    """Held open so that each mistaken nemo_gym:mcqa URI below reuses its server instead of starting one."""
    env = load("nemo_gym:mcqa")
    yield env
    env.close()


@pytest.mark.parametrize(
    ("suffix", "says"),
    [
        ("http://127.0.0.1:1", "give the dataset rows"),
        ("http://127.0.0.1:1/verify?rows=r.jsonl", "no path"),
        ("http://127.0.0.1:1?rows=r.jsonl&dataset=example", "apply to a server Nenyax starts"),
        ("http://127.0.0.1:1?rows=r.jsonl&rowz=1", "Did you mean 'rows'?"),
        ("http://127.0.0.1:1?rows=/no/such/rows.jsonl", "No JSONL file of dataset rows at /no/such/rows.jsonl"),
        ("mcqa?max_turns=0", "at least 1"),
        ("mcqa?tool_errors=maybe", "one of fail, feedback"),
        ("mcqa?dataset=exampel", "Did you mean 'example'?"),
        ("mcqa?gold_field=uuidx", "no answer in the gold field 'uuidx'"),
        ("mqca", "no resources server named 'mqca'. Did you mean 'mcqa'?"),
        ("not-a-name", "is not a NeMo Gym server name"),
    ],
)
def test_uri_mistakes_are_one_sentence(warm_mcqa, suffix, says):
    with pytest.raises(BadURIError) as caught:
        load(f"nemo_gym:{suffix}")
    assert says in str(caught.value), str(caught.value)
    assert _one_sentence(str(caught.value)), str(caught.value)


def test_rows_that_are_not_nemo_gym_rows(tmp_path, mcqa):
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"responses_create_params": {"input": []}}\nnot json\n')
    with pytest.raises(BadURIError, match=r"Line 2 of .* is not JSON"):
        load(uri(mcqa, rows=broken))
    broken.write_text('{"question": "no prompt"}\n')
    with pytest.raises(BadURIError, match=r"no responses_create_params\.input"):
        load(uri(mcqa, rows=broken))


def test_starting_by_name_without_nemo_gym_says_what_to_do(monkeypatch):
    monkeypatch.delenv(launcher.PYTHON_ENV, raising=False)
    monkeypatch.setattr(launcher.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(UsageError) as caught:
        load("nemo_gym:mcqa")
    text = str(caught.value)
    assert "Python >= 3.12" in text
    assert launcher.PYTHON_ENV in text
    assert _one_sentence(text)
    monkeypatch.setenv(launcher.PYTHON_ENV, "/no/such/python")
    with pytest.raises(UsageError, match="not an executable"):
        load("nemo_gym:mcqa")
