"""`export_tasks`: an environment's tasks as prompt rows for a trainer's data loader, in any mode."""

from __future__ import annotations

import orjson
import pytest

from nenyax.core import export_tasks, load
from nenyax.core.engine.export_tasks import TASKS
from nenyax.core.errors import UsageError
from nenyax.core.plugins.registry import Registry
from nenyax_testsupport.fakes import AdapterPlugin
from nenyax_testsupport.native_fakes import NativeAdapters


def _registry(*plugins):
    import nenyax.core.plugin as core  # the jsonl exporter, as the installed plugins give it

    return Registry.from_plugins(("core", core), *plugins)


def _rows(path):
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def test_a_step_environment_s_rows_carry_the_prompt_it_first_shows_and_name_their_task(tmp_path):
    registry = _registry(("fake", AdapterPlugin(factory="nenyax_testsupport.fakes:ArithAdapter")))
    result = export_tasks("arith:add?size=7", out=tmp_path / "tasks.jsonl", limit=5, registry=registry)
    assert (result.rows, result.prompts, result.exporter) == (5, 5, "jsonl")
    rows = _rows(tmp_path / "tasks.jsonl")
    env = load("arith:add?size=7", registry=registry)
    assert [r["task_id"] for r in rows] == env.task_ids(limit=5)
    for row in rows:
        assert tuple(row) == TASKS.names
        assert row["env_uri"] == "arith:add?size=7"
        assert row["mode"] == "step"
        session = env.session(task=row["task_id"])
        assert row["prompt"] == session.render()  # what a chat model is first shown in that task


def test_a_native_loop_s_rows_have_no_prompt_it_builds_that_while_it_plays(tmp_path):
    registry = _registry(("native", NativeAdapters()))
    result = export_tasks("toolmath:mul?size=3", out=tmp_path / "t.jsonl", registry=registry)
    assert (result.rows, result.prompts) == (3, 0)
    rows = _rows(tmp_path / "t.jsonl")
    assert [(r["task_id"], r["prompt"], r["mode"]) for r in rows] == [(f"mul/{i}", None, "rollout") for i in range(3)]


def test_bad_input_is_one_sentence_and_writes_nothing(tmp_path):
    registry = _registry(("fake", AdapterPlugin(factory="nenyax_testsupport.fakes:ArithAdapter")))
    with pytest.raises(UsageError, match=r"^limit must be at least 1, not 0\.$"):
        export_tasks("arith:add", out=tmp_path / "x.jsonl", limit=0, registry=registry)
    with pytest.raises(UsageError, match="exporter"):
        export_tasks("arith:add", to="nope", out=tmp_path / "x.jsonl", registry=registry)
    assert list(tmp_path.iterdir()) == []
