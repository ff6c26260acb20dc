"""Row shapes: raw, SFT and DPO come from one place for every exporter."""

from __future__ import annotations

import pytest

from nenyax.core.contract import rows, serde
from nenyax.core.contract.manifest import Mode
from nenyax.core.contract.trajectory import Group, Judgment, PolicyInfo, Status, Trajectory


def _chat(answer, score, status=Status.OK):
    messages = ({"role": "user", "content": "2+2?"}, {"role": "assistant", "content": answer})
    return Trajectory(
        env_uri="x:y",
        manifest_digest="d",
        mode=Mode.STEP,
        task_id="t",
        seed=0,
        policy=PolicyInfo(kind="test"),
        status=status,
        judgment=None if score is None else Judgment(score=score),
        messages=messages,
        group_id="g",
    )


def test_raw_is_the_whole_record():
    traj = _chat("4", 1.0)
    assert serde.from_data(rows.raw_row(traj), Trajectory) == traj


def test_sft_keeps_only_ok_chat_episodes():
    assert rows.sft_row(_chat("4", 1.0))["messages"][-1] == {"role": "assistant", "content": "4"}
    assert rows.sft_row(_chat("4", None, Status.INFRA_ERROR)) is None


def test_dpo_pairs_best_and_worst_of_a_group_on_the_shared_prompt():
    group = Group(
        group_id="g", task_id="t", trajectories=(_chat("5", 0.0), _chat("4", 1.0), _chat("x", None, Status.TIMEOUT))
    )
    row = rows.dpo_row(group)
    assert row["prompt"] == [{"role": "user", "content": "2+2?"}]
    assert row["chosen"] == [{"role": "assistant", "content": "4"}]
    assert row["rejected"] == [{"role": "assistant", "content": "5"}]
    tie = Group(group_id="h", task_id="t", trajectories=(_chat("4", 1.0), _chat("four", 1.0)))
    assert rows.dpo_row(tie) is None


def test_an_unknown_shape_is_one_sentence():
    with pytest.raises(ValueError, match="Unknown row shape 'csv'"):
        list(rows.rows([], "csv"))
