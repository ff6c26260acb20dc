"""Row shapes: raw, SFT (messages or exact tokens) and DPO come from one place for every exporter.

Most tests read trajectories the real engine recorded (tests/fixtures/export/README.md says how): a
reasoning_gym run on the embedded model, with token ids, and a Gymnasium CartPole run with arrays.
"""

from __future__ import annotations

from pathlib import Path

import attrs
import numpy as np
import pytest

from nenyax.core.contract import arrays, row_schema, rows, serde
from nenyax.core.contract.manifest import Mode
from nenyax.core.contract.trajectory import Group, Judgment, PolicyInfo, Status, Trajectory
from nenyax.core.engine.sinks import read_trajectories
from nenyax.core.errors import UsageError

FIXTURES = Path(__file__).parent / "fixtures" / "export"


def _recorded(name):
    return list(read_trajectories(FIXTURES / f"{name}.jsonl"))


def _chat(answer, score, status=Status.OK, **fields):
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
        **{"group_id": "g", **fields},
    )


def test_raw_rows_have_exactly_the_schemas_columns_and_the_whole_record():
    mixed = _recorded("basic_arithmetic") + _recorded("cartpole")
    made = list(rows.rows(mixed, "raw"))
    assert len(made) == len(mixed)
    for row, traj in zip(made, mixed, strict=True):
        assert tuple(row) == rows.schema("raw").names
        assert serde.loads(row["record"], Trajectory) == traj
        assert row["id"] == traj.id
        assert row["group_id"] == traj.group_id
        assert row["status"] == traj.status.value
        assert row["score"] == traj.score
        assert row["seed"] == traj.seed
        assert row["model"] == traj.policy.model
    qa = made[0]
    assert qa["provider"] == "local"
    assert qa["model_calls"][0]["logprobs"] == list(mixed[0].model_calls[0].logprobs)
    assert qa["model_calls"][0]["prompt_token_ids"] == list(mixed[0].model_calls[0].prompt_token_ids)


def test_raw_observations_keep_their_type_arrays_as_dtype_shape_and_bytes():
    cart = _recorded("cartpole")[0]
    row = rows.raw_row(cart)
    first = row["steps"][0]["observation"]
    assert first["type"] == "ndarray"
    assert first["dtype"] == "float32"
    assert first["shape"] == [4]
    recorded = arrays.decode(serde.to_data(cart)["steps"][0]["observation"])
    assert np.array_equal(np.frombuffer(first["data"], dtype="<f4").reshape(4), recorded)
    assert row["steps"][0]["action"] == {"type": "int", "json": str(serde.to_data(cart)["steps"][0]["action"])}
    qa = rows.raw_row(_recorded("basic_arithmetic")[0])
    assert qa["steps"][0]["observation"]["type"] == "str"
    assert rows.value_cell({"a": [1, 2]}) == {"type": "dict", "json": '{"a":[1,2]}'}
    assert rows.value_cell(None) == {"type": "null", "json": "null"}


def test_sft_keeps_only_ok_judged_chat_episodes_above_the_min_score():
    good, poor = _chat("4", 1.0), _chat("5", 0.0)
    failed, unjudged = _chat("4", None, Status.INFRA_ERROR), _chat("4", None, Status.POLICY_ERROR)
    made = list(rows.rows([good, poor, failed, unjudged], "sft"))
    assert [r["trajectory_id"] for r in made] == [good.id, poor.id]
    assert made[0]["messages"][-1] == {"role": "assistant", "content": "4"}
    assert tuple(made[0]) == rows.schema("sft").names
    kept = list(rows.rows([good, poor], "sft", rows.RowOptions(min_score=0.5)))
    assert [r["trajectory_id"] for r in kept] == [good.id]
    # The CartPole run played no chat: no sft row.
    assert list(rows.rows(_recorded("cartpole"), "sft")) == []


def test_sft_tool_call_arguments_become_objects_as_chat_templates_want():
    call = {"id": "c1", "type": "function", "function": {"name": "lamp", "arguments": '{"room": "hall"}'}}
    messages = (
        {"role": "user", "content": "light?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "name": "lamp", "content": "on"},
        {"role": "assistant", "content": [{"type": "text", "text": "It is "}, {"type": "text", "text": "on."}]},
    )
    row = rows.sft_row(attrs.evolve(_chat("x", 1.0), messages=messages))
    assert row["messages"][1]["tool_calls"][0]["function"]["arguments"] == {"room": "hall"}
    assert row["messages"][2] == {"role": "tool", "content": "on", "tool_call_id": "c1", "name": "lamp"}
    assert row["messages"][3]["content"] == "It is on."
    raw = rows.raw_row(attrs.evolve(_chat("x", 1.0), messages=messages))
    assert isinstance(raw["messages"][1]["tool_calls"][0], str), "raw keeps tool calls as JSON text"


def test_tokenized_sft_is_the_exact_recorded_ids_with_the_sampled_tokens_masked():
    recorded = _recorded("basic_arithmetic")
    made = list(rows.rows(recorded, "sft", rows.RowOptions(tokenized=True)))
    assert len(made) == len(recorded)
    for row, traj in zip(made, recorded, strict=True):
        call = traj.model_calls[-1]
        assert row["input_ids"] == [*call.prompt_token_ids, *call.completion_token_ids]
        assert row["assistant_masks"] == [0] * len(call.prompt_token_ids) + [1] * len(call.completion_token_ids)
        assert tuple(row) == rows.schema("sft", rows.RowOptions(tokenized=True)).names


def test_tokenized_sft_spans_turns_only_when_each_prompt_extends_the_last():
    traj = _recorded("basic_arithmetic")[0]
    first = traj.model_calls[0]
    grown = attrs.evolve(
        first,
        prompt_token_ids=(*first.prompt_token_ids, *first.completion_token_ids, 7, 8),
        completion_token_ids=(9, 10),
    )
    two_turns = attrs.evolve(traj, model_calls=(first, grown))
    row = rows.sft_tokens_row(two_turns)
    n_prompt, n_done = len(first.prompt_token_ids), len(first.completion_token_ids)
    assert row["input_ids"] == [*first.prompt_token_ids, *first.completion_token_ids, 7, 8, 9, 10]
    assert row["assistant_masks"] == [0] * n_prompt + [1] * n_done + [0, 0, 1, 1]
    ids = list(grown.prompt_token_ids)
    ids[3] += 1  # the first turn rendered differently the second time
    rerendered = attrs.evolve(grown, prompt_token_ids=tuple(ids))
    assert rows.sft_tokens_row(attrs.evolve(traj, model_calls=(first, rerendered))) is None
    assert rows.sft_tokens_row(attrs.evolve(traj, token_faithful=False)) is None
    assert rows.sft_tokens_row(attrs.evolve(traj, model_calls=(attrs.evolve(first, prompt_token_ids=None),))) is None


def test_dpo_groups_by_group_id_itself_and_pairs_best_with_worst():
    recorded = _recorded("basic_arithmetic")
    made = list(rows.rows(recorded, "dpo"))
    assert len(made) == 1, "one of the two recorded groups has a preference; the other is all ties"
    row = made[0]
    group = [t for t in recorded if t.group_id == row["group_id"]]
    best = max(group, key=lambda t: t.score)
    assert row["chosen_id"] == best.id
    assert row["score_chosen"] > row["score_rejected"]
    assert [m["role"] for m in row["prompt"]] == ["system", "user"]
    assert row["chosen"][0]["role"] == "assistant"
    assert row["chosen"] != row["rejected"]
    assert tuple(row) == rows.schema("dpo").names


def test_dpo_rows_need_a_preference_and_the_same_prompt():
    group = Group(
        group_id="g", task_id="t", trajectories=(_chat("5", 0.0), _chat("4", 1.0), _chat("x", None, Status.TIMEOUT))
    )
    row = rows.dpo_row(group)
    assert row["prompt"] == [{"role": "user", "content": "2+2?"}]
    assert row["chosen"] == [{"role": "assistant", "content": "4"}]
    assert row["rejected"] == [{"role": "assistant", "content": "5"}]
    assert rows.dpo_row(Group(group_id="h", task_id="t", trajectories=(_chat("4", 1.0), _chat("four", 1.0)))) is None
    lone = [_chat("4", 1.0, group_id=None), _chat("5", 0.0, group_id=None)]
    assert list(rows.rows(lone, "dpo")) == [], "trajectories without a group_id are never paired"


def test_an_unknown_shape_or_a_misplaced_option_is_one_sentence():
    with pytest.raises(UsageError, match=r"^There is no row shape 'sfd'\. Did you mean 'sft'\?$"):
        list(rows.rows([], "sfd"))
    with pytest.raises(UsageError, match="Only sft rows come pre-tokenized"):
        rows.schema("dpo", rows.RowOptions(tokenized=True))
    with pytest.raises(UsageError, match="--min-score filters sft rows only"):
        rows.schema("raw", rows.RowOptions(min_score=1.0))


def test_the_schemas_describe_their_types_without_pyarrow():
    assert str(row_schema.MESSAGES) == (
        "list<struct<role: string, content: string, tool_calls: list<json>, tool_call_id: string, name: string>>"
    )

    def kinds(type_):
        yield type_.kind
        if type_.item is not None:
            yield from kinds(type_.item)
        for field in type_.fields:
            yield from kinds(field.type)

    raw_kinds = {k for c in row_schema.RAW.columns for k in kinds(c.type)}
    assert "json" not in raw_kinds, "raw holds JSON text, never json values"
    assert "json" in {k for c in row_schema.SFT.columns for k in kinds(c.type)}
    with pytest.raises(ValueError, match="kind"):
        row_schema.ColumnType("decimal")
