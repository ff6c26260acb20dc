"""Pins for the engine's rewritten modules, written for mutants that survived the suite (tests/README.md,
"Mutation testing"): each assertion fails under the mutant named beside it.

Core's doubles only (`nenyax.testing.fakes`, `native_fakes`): core is tested alone. The native loop is the
real one, on the official `openai` client against the recording proxy.
"""

from __future__ import annotations

import pytest

from nenyax.core import JsonlSink, Status, UsageError, read_trajectories
from nenyax.core.contract.trajectory import PolicyInfo
from nenyax.testing.fakes import ArithEnvironment
from nenyax.testing.native_fakes import ToolMathEnvironment, operands


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
