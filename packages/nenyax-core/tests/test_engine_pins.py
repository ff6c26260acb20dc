"""Pins for the engine's rewritten modules, written for mutants that survived the suite (tests/README.md,
"Mutation testing"): each assertion fails under the mutant named beside it.

Core's doubles only (`nenyax_testsupport.fakes`, `native_fakes`): core is tested alone. The native loop is the
real one, on the official `openai` client against the recording proxy.
"""

from __future__ import annotations

import threading

import pytest

from nenyax.core import EpisodeInterrupted, JsonlSink, Status, UnsupportedPolicyError, UsageError, read_trajectories
from nenyax.core.contract.trajectory import Judgment, PolicyInfo
from nenyax.core.engine.executors import Job
from nenyax.core.engine.policies import as_policy
from nenyax.core.engine.runner import run_jobs
from nenyax.core.engine.step_loop import run_step_episode
from nenyax.core.engine.sync import run_sync
from nenyax_testsupport.fakes import ArithEnvironment
from nenyax_testsupport.native_fakes import ToolMathEnvironment, operands


class IndexRecorder:
    """The native loop's reference answers, noting the index of each turn it is asked."""

    speaks_text = True
    info = PolicyInfo(kind="callable", name="recorder")

    def __init__(self, env: ToolMathEnvironment) -> None:
        self.env, self.indexes = env, []

    async def act(self, turn):
        self.indexes.append(turn.index)
        return self.env.reference_reply("mul/1", list(turn.messages))


def test_a_native_loop_s_turns_are_numbered_one_by_one():  # native_loop _PolicyResponder: turns += 2
    env = ToolMathEnvironment("toolmath:mul")
    policy = IndexRecorder(env)
    traj = env.rollout(policy, task="mul/1")
    assert traj.status is Status.OK
    assert policy.indexes == [0, 1]  # the tool call, then the answer
    a, b = operands("mul/1")
    assert traj.model_calls[-1].response["content"] == str(a * b)


def test_a_native_policy_answering_with_neither_text_nor_a_message_is_a_policy_error_that_says_so():
    # native_loop _in_process_call: PolicyFailure(None)
    traj = ToolMathEnvironment("toolmath:mul").rollout(lambda messages: 42, task="mul/1")
    assert traj.status is Status.POLICY_ERROR
    assert traj.error is not None
    assert "must return text or an assistant message, not int" in traj.error


def test_groups_keep_the_group_id_their_members_share():  # runner.group: Group(group_id=None, ...)
    env = ArithEnvironment("arith:add?size=6", size=6, seed=0)
    groups = env.groups("reference", env.task_ids(limit=3), n=2)
    assert len(groups) == 3
    for g in groups:
        ids = {t.group_id for t in g.trajectories}
        assert len(ids) == 1
        assert g.group_id == ids.pop() is not None
    assert len({g.group_id for g in groups}) == 3


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"n": 0}, "n must be an integer of at least 1, got 0."),
        ({"concurrency": 0}, "concurrency must be"),
        ({"tasks": "add/0"}, "not the string 'add/0'; write ['add/0']."),
    ],
)
def test_bad_counts_are_refused_in_words(options, said):  # runner.run_many: UsageError(None)
    env = ArithEnvironment("arith:add?size=6", size=6, seed=0)
    with pytest.raises(UsageError) as caught:
        env.rollouts("reference", **{"tasks": 2, **options})
    assert said in str(caught.value)


def test_a_cut_off_last_line_longer_than_a_read_block_is_dropped_before_appending(tmp_path):
    # sinks._last_line_start: position = None (a line past 64 KiB is read back block by block)
    env = ArithEnvironment("arith:add?size=6", size=6, seed=0)
    path = tmp_path / "t.jsonl"
    env.rollouts("reference", 1, sink=path)
    kept = path.read_bytes()
    path.write_bytes(kept + b'{"cut": "' + b"x" * 200_000)  # a killed writer's last line, three blocks long
    sink = JsonlSink(path)
    sink.close()
    assert path.read_bytes() == kept
    assert len(list(read_trajectories(path))) == 1


def test_a_synchronous_session_under_a_timeout_is_stepped_with_the_action():
    # step_loop._act: a sync session's act runs on a daemon thread while the timer runs, given the action
    env = ArithEnvironment("arith:add?size=6", size=6, seed=0)
    traj = env.rollout("reference", task=env.task_ids(limit=1)[0], timeout=30)
    assert traj.status is Status.OK
    assert traj.score == 1.0


class ReturnJudge:
    """A trajectory judge: the episode's summed reward, named so a test can tell it from others."""

    def judge_trajectory(self, trajectory, reference):
        total = sum(step.reward for step in trajectory.steps)
        return Judgment(score=total, passed=total == 1.0, judge="test:return")


class TrajectoryJudgedArith(ArithEnvironment):
    """Arith whose sessions are judged whole, by `ReturnJudge`, as gymnasium's return judge does."""

    def session(self, task=None, seed=None):
        session = super().session(task=task, seed=seed)
        session.trajectory_judge = ReturnJudge()
        return session


def test_a_trajectory_judged_episode_gets_its_judge_s_judgment():
    # step_loop.run_step_episode: _judge_trajectory(session, None, trajectory)
    env = TrajectoryJudgedArith("arith:add?size=6", size=6, seed=0)
    traj = env.rollout("reference", task=env.task_ids(limit=1)[0])
    assert traj.status is Status.OK
    assert traj.judgment.judge == "test:return"
    assert traj.score == 1.0


def test_a_policy_error_under_a_trajectory_judge_scores_0_in_the_policy_s_name():
    # step_loop._judge_trajectory: judge=None, score=1.0
    def broken(observation):
        raise ValueError("no answer today")

    env = TrajectoryJudgedArith("arith:add?size=6", size=6, seed=0)
    traj = env.rollout(broken, task=env.task_ids(limit=1)[0])
    assert traj.status is Status.POLICY_ERROR
    assert traj.judgment.judge == "nenyax:policy_error"
    assert traj.judgment.score == 0.0
    assert traj.judgment.passed is False
    assert "no answer today" in traj.judgment.feedback


def test_an_opened_session_is_the_one_played():
    # step_loop.run_step_episode: session = None (the episode would open the default task instead)
    env = ArithEnvironment("arith:add?size=6", size=6, seed=0)
    last = env.task_ids()[-1]
    opened = env.session(task=last)
    traj = run_sync(run_step_episode(env, as_policy("reference"), opened=opened))
    assert traj.task_id == last
    assert traj.steps[0].observation == opened.observation
    assert traj.score == 1.0


def test_a_policy_abandonable_under_a_timeout_runs_on_a_thread_named_for_it():
    # step_loop._in_daemon_thread: the thread's name (what a stack dump of a hung run shows)
    names = []

    def policy(observation):
        names.append(threading.current_thread().name)
        return "0"

    env = ArithEnvironment("arith:add?size=6", size=6, seed=0)
    traj = env.rollout(policy, task=env.task_ids(limit=1)[0], timeout=30)
    assert traj.status is Status.OK
    assert names == ["nenyax-policy"]


def test_ctrl_c_in_a_step_episode_rides_out_with_the_trajectory_and_says_what_happened():
    # step_loop.run_step_episode: the interrupted episode's error, as the user reads it
    def interrupted(observation):
        raise KeyboardInterrupt

    env = ArithEnvironment("arith:add?size=6", size=6, seed=0)
    with pytest.raises(EpisodeInterrupted) as caught:
        env.rollout(interrupted, task=env.task_ids(limit=1)[0])
    traj = caught.value.trajectory
    assert traj.status is Status.INTERRUPTED
    assert traj.error == "The run was interrupted (Ctrl-C) before the episode ended."


def test_rollouts_that_keep_nothing_return_an_empty_list_and_write_every_episode(tmp_path):
    # runner.run_jobs: results = [None] * len(jobs) even when keep is False
    env = ArithEnvironment("arith:add?size=6", size=6, seed=0)
    jobs = [Job(task, None, 0) for task in env.task_ids(limit=4)]
    path = tmp_path / "t.jsonl"
    kept = run_sync(run_jobs(env, as_policy("reference"), jobs, sink=path, keep=False))
    assert kept == []
    assert len(list(read_trajectories(path))) == 4


def test_a_native_reply_that_names_another_role_is_still_the_assistant_s():
    # native_loop._in_process_call: the reply's own "role" is dropped (k != "ROLE" keeps it)
    env = ToolMathEnvironment("toolmath:mul")
    a, b = operands("mul/1")
    traj = env.rollout(lambda messages: {"role": "user", "content": str(a * b)}, task="mul/1")
    assert traj.model_calls[0].response["role"] == "assistant"


class NoReferenceReply(ToolMathEnvironment):
    """A rollout environment with no in-process reference reply (a harness whose reference is its own agent)."""

    def __getattribute__(self, name):
        if name == "reference_reply":
            raise AttributeError(name)
        return super().__getattribute__(name)


def test_a_native_reference_without_a_reference_reply_is_refused_in_words():
    # native_loop.responder: getattr(env, "reference_reply") without its default raises AttributeError
    env = NoReferenceReply("toolmath:mul")
    with pytest.raises(UnsupportedPolicyError) as caught:
        env.rollout("reference", task="mul/1")
    assert "has no reference reply to answer its loop's model calls with" in str(caught.value)
