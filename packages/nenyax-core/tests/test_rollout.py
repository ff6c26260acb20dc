"""The rollout engine on the in-memory `arith` fake.

nenyax-core cannot install a real adapter for its own tests (every adapter depends on core, and core
is tested alone), so these tests use `nenyax_testsupport.fakes`; the subclasses below break it in one
way each, because no real environment fails on demand at exactly one place.
"""

import asyncio
import time
from typing import ClassVar

import orjson
import pytest

from nenyax.core.contract.trajectory import PolicyInfo, Status
from nenyax.core.engine.rundirs import new_run_dir, read_config
from nenyax.core.engine.sinks import JsonlSink, read_trajectories
from nenyax.core.errors import InfraFailure, PolicyFailure, RetryablePolicyFailure, UsageError
from nenyax_testsupport.fakes import ArithEnvironment, ArithSession


@pytest.fixture
def env():
    return ArithEnvironment("arith:add?size=6", size=6, seed=0)


def test_builtin_policies_are_judged(env):
    ref, null, rand = (env.rollout(p, task="add/0/1") for p in ("reference", "null", "random"))
    assert (ref.status, ref.score, ref.judgment.passed) == (Status.OK, 1.0, True)
    assert (null.score, rand.score) == (0.0, 0.0)
    assert ref.policy.kind == "reference"
    assert ref.task_id == "add/0/1"
    assert ref.manifest_digest == env.digest


def test_timing_brackets_the_episode(env):
    called = []
    before = time.time()
    traj = env.rollout(lambda observation: called.append(time.time()) or "0")
    after = time.time()
    assert before <= traj.timing.started <= called[0] <= traj.timing.ended <= after
    assert traj.timing.seconds == traj.timing.ended - traj.timing.started


def test_callable_policy_sees_the_native_observation(env):
    seen = []

    def policy(observation):
        seen.append(observation)
        a, b = (int(x) for x in observation.removeprefix("What is ").removesuffix("?").split(" + "))
        return str(a + b)

    traj = env.rollout(policy, task="add/0/2")
    assert traj.score == 1.0
    assert seen == [traj.steps[0].observation]
    assert traj.policy.kind == "callable"
    assert "policy" in traj.policy.name


def test_async_callable_policy(env):
    async def policy(observation):
        await asyncio.sleep(0)
        return "nope"

    assert env.rollout(policy).status is Status.OK


def test_policy_failure_is_scored_zero_and_infra_failure_is_not_scored(env):
    def broken(_):
        raise ValueError("bad policy")

    def outage(_):
        raise InfraFailure("server down")

    failed = env.rollout(broken)
    assert failed.status is Status.POLICY_ERROR
    assert failed.score == 0.0
    assert "bad policy" in failed.error
    infra = env.rollout(outage)
    assert infra.status is Status.INFRA_ERROR
    assert infra.judgment is None
    assert infra.score is None


class _BrokenStart(ArithEnvironment):
    """Its sessions cannot start: an env_error at reset."""

    def session(self, task=None, seed=None):
        raise RuntimeError("reset exploded")


class _UnreachableStart(ArithEnvironment):
    def session(self, task=None, seed=None):
        raise InfraFailure("the server at ws://127.0.0.1:9 refused the connection")


class _BrokenVerifier(ArithEnvironment):
    """Its verifier divides by zero: a verifier_error after a complete episode."""

    def session(self, task=None, seed=None):
        session = super().session(task, seed)
        session.judge = lambda steps: 1 / 0
        return session


def test_env_and_verifier_failures_are_classified_and_keep_what_happened():
    started = _BrokenStart("arith:add", size=2, seed=0).rollout("reference", task="add/0/0")
    assert started.status is Status.ENV_ERROR
    assert started.judgment is None
    assert "reset exploded" in started.error
    unreachable = _UnreachableStart("arith:add", size=2, seed=0).rollout("reference", task="add/0/0")
    assert unreachable.status is Status.INFRA_ERROR
    assert unreachable.judgment is None
    assert "9 refused" in unreachable.error
    judged = _BrokenVerifier("arith:add", size=2, seed=0).rollout("reference", task="add/0/0")
    assert judged.status is Status.VERIFIER_ERROR
    assert judged.judgment is None
    assert len(judged.steps) == 1
    assert judged.steps[0].reward == 1.0


class _LostServer(ArithEnvironment):
    def session(self, task=None, seed=None):
        raise InfraFailure("The server at http://127.0.0.1:9 dropped the connection.")


def test_a_server_lost_before_the_episode_starts_is_infra_error_not_env_error():
    traj = _LostServer("arith:add", size=2, seed=0).rollout("reference", task="add/0/0")
    assert traj.status is Status.INFRA_ERROR
    assert traj.judgment is None
    assert "127.0.0.1:9" in traj.error


def test_unknown_task_is_a_user_error(env):
    with pytest.raises(UsageError, match="is not a task"):
        env.rollout("reference", task="add/0/99")


async def _never_answers(_):
    """A policy that waits forever: only the episode's timeout can end it (no race with a sleep)."""
    await asyncio.Event().wait()


def test_timeout_status(env):
    slow = _never_answers

    traj = asyncio.run(env.arollout(slow, timeout=0.05))
    assert traj.status is Status.TIMEOUT
    assert traj.judgment is None


class _TextPolicy:
    """A chat policy replying from a script: these tests need exact replies (malformed ones too), which no
    real model gives on demand; nenyax-core's tests also install no model (the embedded one is its own
    distribution, tested in tests/test_embedded_model.py)."""

    info = PolicyInfo(kind="test", name="text")
    speaks_text = True

    def __init__(self, reply):
        self.reply = reply

    async def act(self, turn):
        return self.reply(turn.messages)


class _StrictSession(ArithSession):
    def parse_action(self, text):
        if not text.strip().isdigit():
            raise PolicyFailure(f"{text!r} is not a number.")
        return text.strip()


class _StrictEnv(ArithEnvironment):
    def session(self, task=None, seed=None):
        base = super().session(task, seed)
        return _StrictSession(self, base.task_id)


def test_text_policy_transcript_and_parse_failure():
    env = _StrictEnv("arith:add", size=2, seed=0)
    good = env.rollout(_TextPolicy(lambda messages: " 12 "), task="add/0/0")
    assert [m["role"] for m in good.messages] == ["user", "assistant"]
    assert good.steps[0].text == " 12 "
    assert good.status is Status.OK
    bad = env.rollout(_TextPolicy(lambda messages: "twelve"), task="add/0/0")
    assert bad.status is Status.POLICY_ERROR
    assert bad.score == 0.0
    assert bad.steps[0].text == "twelve"
    assert "not a number" in bad.steps[0].info["error"]


class _RetryingSession(ArithSession):
    """Takes two unparseable replies before giving up, and records observations in its own form."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.failures = 0

    def parse_action(self, text):
        if text.strip().isdigit():
            return text.strip()
        self.failures += 1
        error = RetryablePolicyFailure if self.failures <= 2 else PolicyFailure
        raise error(f"{text!r} is not a number.")

    def recorded_observation(self, observation):
        return {"recorded": observation}


def test_a_retryable_parse_failure_is_a_turn_and_the_policy_is_asked_again():
    env = _env_with(_RetryingSession)
    answer = env.rollout("reference", task="add/0/0").steps[0].action
    replies = iter(["twelve", "still no", f" {answer} "])
    traj = env.rollout(_TextPolicy(lambda messages: next(replies)), task="add/0/0")
    assert traj.status is Status.OK
    assert traj.score == 1.0
    assert [s.text for s in traj.steps] == ["twelve", "still no", f" {answer} "]
    assert [s.action for s in traj.steps] == [None, None, answer]
    assert traj.steps[0].info["retry"] is True
    assert "not a number" in traj.steps[0].info["error"]
    assert traj.steps[0].observation == {"recorded": traj.steps[2].observation}
    spent = env.rollout(_TextPolicy(lambda messages: "no"), task="add/0/0")
    assert spent.status is Status.POLICY_ERROR
    assert len(spent.steps) == 3
    assert "retry" not in spent.steps[-1].info
    assert all(isinstance(s.observation, dict) for s in spent.steps)


def test_random_policy_is_reproducible_per_sample(env):
    first = asyncio.run(env.arollout("random", task="add/0/0", sample=0))
    again = asyncio.run(env.arollout("random", task="add/0/0", sample=0))
    other = asyncio.run(env.arollout("random", task="add/0/0", sample=1))
    assert first.steps[0].action == again.steps[0].action != other.steps[0].action


def test_sync_rollout_works_inside_a_running_loop(env):
    async def notebook_cell():
        return env.rollout("reference", task="add/0/0")

    assert asyncio.run(notebook_cell()).score == 1.0


def test_rollouts_stream_groups_to_jsonl_with_bounded_concurrency(env, tmp_path):
    path = tmp_path / "run" / "trajectories.jsonl"
    active, peak, lines_seen = 0, 0, []
    both_running = asyncio.Event()  # the first episodes hold until a second one runs beside them

    async def policy(_):
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        if active == 2:
            both_running.set()
        lines_seen.append(len(path.read_bytes().splitlines()) if path.exists() else 0)
        await asyncio.wait_for(both_running.wait(), 60)  # fails (not hangs) if episodes never overlap
        active -= 1
        return "0"

    trajs = env.rollouts(policy, ["add/0/0", "add/0/1"], n=3, concurrency=2, sink=path)
    assert len(trajs) == 6
    assert peak == 2
    groups = {t.task_id: {t2.group_id for t2 in trajs if t2.task_id == t.task_id} for t in trajs}
    assert all(len(ids) == 1 for ids in groups.values())
    assert len({*groups["add/0/0"], *groups["add/0/1"]}) == 2
    # With two workers the fourth episode starts only after two have finished, and each is written
    # before its worker takes the next: earlier episodes were on disk while later ones ran.
    assert lines_seen[3:]
    assert min(lines_seen[3:]) >= 2
    assert sorted(t.id for t in read_trajectories(path)) == sorted(t.id for t in trajs)


def test_sink_appends_and_reader_skips_a_cut_last_line(env, tmp_path):
    path = tmp_path / "t.jsonl"
    with JsonlSink(path) as sink:
        sink.write(env.rollout("reference"))
    with JsonlSink(path) as sink:
        sink.write(env.rollout("null"))
    with path.open("ab") as f:
        f.write(b'{"env_uri": "arith:add", "cut sho')
    assert [t.policy.kind for t in read_trajectories(path)] == ["reference", "null"]
    with JsonlSink(path) as sink:  # resuming after the crash: the fragment goes, the file stays readable
        sink.write(env.rollout("random"))
    assert [t.policy.kind for t in read_trajectories(path)] == ["reference", "null", "random"]


def test_reader_refuses_a_damaged_middle_line(env, tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"{broken\n" + orjson.dumps({"x": 1}) + b"\n")
    with pytest.raises(UsageError, match="damaged"):
        list(read_trajectories(path))


def test_run_dir_records_the_manifest(env, tmp_path):
    run = new_run_dir(tmp_path, env.manifest, {"policy": "reference"})
    config = read_config(run)
    assert config.manifest_digest == env.digest
    assert config.settings["policy"] == "reference"
    assert new_run_dir(tmp_path, env.manifest) != run


class _CodecBug(ArithSession):
    """A text codec bug in the adapter: rendering raises."""

    def render(self):
        raise KeyError("template")


class _ParserBug(ArithSession):
    """A parser bug in the adapter: parsing raises something other than PolicyFailure."""

    def parse_action(self, text):
        raise ValueError("parser bug")


class _Closing(ArithSession):
    """Records that it was closed."""

    closed: ClassVar[list] = []

    def close(self):
        _Closing.closed.append(self.task_id)


def _env_with(session_cls):
    class Env(ArithEnvironment):
        def session(self, task=None, seed=None):
            return session_cls(self, super().session(task, seed).task_id)

    return Env("arith:add", size=4, seed=0)


def test_adapter_bugs_in_the_text_codec_are_env_errors():
    render = _env_with(_CodecBug).rollout(_TextPolicy(lambda m: "1"))
    assert render.status is Status.ENV_ERROR
    assert render.judgment is None
    assert "template" in render.error
    parse = _env_with(_ParserBug).rollout(_TextPolicy(lambda m: "1"))
    assert parse.status is Status.ENV_ERROR
    assert parse.steps[0].text == "1"
    assert "parser bug" in parse.error


def test_a_user_error_mid_episode_still_closes_the_session():
    _Closing.closed.clear()
    env = _env_with(_Closing)

    def misconfigured(_):
        raise UsageError("The model server rejected the API key.")

    with pytest.raises(UsageError, match="API key"):
        env.rollout(misconfigured, task="add/0/1")
    assert _Closing.closed == ["add/0/1"]


def test_one_failing_episode_lets_the_others_finish_and_be_written(tmp_path):
    sink = tmp_path / "t.jsonl"
    failed = asyncio.Event()

    async def policy(observation):
        if policy.calls == 2:
            failed.set()
            raise UsageError("stop the run")
        policy.calls += 1
        await asyncio.wait_for(failed.wait(), 60)  # still under way when the third episode fails
        return "0"

    policy.calls = 0
    env = ArithEnvironment("arith:add", size=8, seed=0)
    with pytest.raises(UsageError, match="stop the run"):
        env.rollouts(policy, 8, concurrency=4, sink=sink)
    written = list(read_trajectories(sink))
    assert len(written) == 2
    assert all(t.status is Status.OK for t in written)


def test_timeout_through_the_public_api(env):
    slow = _never_answers
    assert env.rollout(slow, timeout=0.05).status is Status.TIMEOUT
    assert {t.status for t in env.rollouts(slow, 2, timeout=0.05)} == {Status.TIMEOUT}


def test_negative_task_counts_are_refused(env):
    with pytest.raises(UsageError, match="at least 0"):
        env.rollouts("null", -1)


@pytest.mark.parametrize("task", [3, "", b"add/0/0"])
def test_a_task_that_is_not_a_task_id_fails_at_the_call(task):
    env = ArithEnvironment("arith:add", size=3, seed=0)
    with pytest.raises(UsageError, match="A task must be a task id"):
        env.rollout("reference", task=task)
    with pytest.raises(UsageError, match="A task must be a task id"):
        env.rollouts("reference", [task])


def test_tasks_that_are_neither_a_count_nor_a_list_fail_at_the_call():
    env = ArithEnvironment("arith:add", size=3, seed=0)
    with pytest.raises(UsageError, match=r"tasks must be a task count or a list of task ids, got 3\.5"):
        env.rollouts("reference", 3.5)


@pytest.mark.parametrize(("action", "kind"), [(42, "an int"), (None, "None"), ({"a": 1}, "a dict"), (["77"], "a list")])
def test_a_policy_returning_the_wrong_action_type_is_a_policy_error(action, kind):
    env = ArithEnvironment("arith:add", size=3, seed=0)
    traj = env.rollout(lambda observation: action)
    assert traj.status is Status.POLICY_ERROR
    assert traj.score == 0.0
    assert traj.error == f"The policy returned {kind} where the environment takes a str."
    assert traj.steps[0].action is None  # never recorded (nor judged) as an answer
