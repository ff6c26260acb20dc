"""The ``parquet`` exporter: one schema for a run mixing environments, read back by polars and datasets.

The trajectories are the ones nenyax-core's tests use, recorded by the real engine
(packages/nenyax-core/tests/fixtures/export/README.md): one copy in the checkout, read from there.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import attrs
import datasets
import numpy as np
import orjson
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from nenyax.core import export, serde
from nenyax.core.contract import rows
from nenyax.core.contract.trajectory import Trajectory
from nenyax.core.engine.rundirs import TRAJECTORIES
from nenyax.core.engine.sinks import read_trajectories
from nenyax.core.plugins.exporter import Exporter
from nenyax.core.plugins.registry import default_registry
from nenyax.exporters.parquet.arrow import arrow_schema
from nenyax.testing import CHECKS, Subject, Verdict, run_check

FIXTURES = Path(__file__).parents[2] / "nenyax-core" / "tests" / "fixtures" / "export"


@pytest.fixture
def mixed(tmp_path):
    """A run directory mixing a question/answer env (reasoning_gym) and a Gymnasium one (CartPole)."""
    run = tmp_path / "run"
    run.mkdir()
    lines = (FIXTURES / "basic_arithmetic.jsonl").read_bytes() + (FIXTURES / "cartpole.jsonl").read_bytes()
    (run / TRAJECTORIES).write_bytes(lines)
    return run


@pytest.mark.parametrize("check", CHECKS["exporter"], ids=lambda c: c.id)
def test_the_exporter_conformance_kit_passes(check):
    found = run_check(check, Subject.from_registry("exporter", "parquet", default_registry()))
    assert found.verdict is Verdict.PASSED, (found.reason, [f.message for f in found.findings])


def test_the_plugin_is_installed_as_an_exporter():
    exporter = default_registry().create("exporter", "parquet")
    assert isinstance(exporter, Exporter)
    assert exporter.suffix == ".parquet"


def test_a_mixed_run_is_one_parquet_file_polars_and_datasets_read(mixed):
    result = export(mixed, to="parquet", rows="raw")
    assert result.destination == str(mixed / "raw.parquet")
    assert pq.read_schema(result.destination).equals(arrow_schema(rows.schema("raw")), check_metadata=False)
    frame = pl.read_parquet(result.destination)
    assert frame.height == 10
    assert frame["env_uri"].unique().sort().to_list() == ["gymnasium:CartPole-v1", "reasoning_gym:basic_arithmetic"]
    assert frame.schema["score"] == pl.Float64
    steps = frame.filter(pl.col("env_uri") == "gymnasium:CartPole-v1")["steps"][0]
    obs = steps[0]["observation"]
    assert (obs["type"], obs["dtype"], obs["shape"]) == ("ndarray", "float32", [4])
    recorded = next(iter(read_trajectories(FIXTURES / "cartpole.jsonl")))
    expected = np.asarray(recorded.steps[0].observation["values"], dtype="float32")
    assert np.array_equal(np.frombuffer(obs["data"], dtype="<f4"), expected)
    qa = frame.filter(pl.col("env_uri") == "reasoning_gym:basic_arithmetic")["steps"][0][0]["observation"]
    assert qa["type"] == "str"
    assert qa["data"] is None
    dataset = datasets.Dataset.from_parquet(result.destination)
    assert dataset.num_rows == 10
    assert serde.loads(dataset[0]["record"], Trajectory).id == dataset[0]["id"]


def test_logprobs_are_float64_and_exact(mixed):
    recorded = list(read_trajectories(mixed / TRAJECTORIES))
    table = pq.read_table(export(mixed, to="parquet", rows="raw").destination)
    assert table.schema.field("model_calls").type.value_type.field("logprobs").type == pa.list_(pa.float64())
    calls = table.column("model_calls").to_pylist()
    assert calls[0][0]["logprobs"] == list(recorded[0].model_calls[0].logprobs)


def test_polars_reads_the_jsonl_raw_export_of_a_mixed_run_too(mixed):
    frame = pl.read_ndjson(export(mixed, to="jsonl", rows="raw").destination)
    assert frame.height == 10
    assert frame.schema["steps"].inner.to_schema()["observation"].to_schema()["type"] == pl.String


def _with_tool_call(traj, arguments, n):
    call = {
        "id": f"c{n}",
        "type": "function",
        "function": {"name": "set", "arguments": orjson.dumps(arguments).decode()},
    }
    messages = (
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"c{n}", "name": "set", "content": "done"},
        {"role": "assistant", "content": "Done."},
    )
    return attrs.evolve(traj, messages=messages, id=f"t{n}")


def test_tool_call_arguments_come_back_exact_from_the_json_column(tmp_path):
    base = next(iter(read_trajectories(FIXTURES / "basic_arithmetic.jsonl")))
    source = tmp_path / "tools.jsonl"
    calls = [{"room": "living", "state": "on"}, {"x": 1, "y": 2}]
    source.write_bytes(b"".join(serde.dumps(_with_tool_call(base, a, n)) + b"\n" for n, a in enumerate(calls)))
    out = export(source, to="parquet", rows="sft").destination
    field = pq.read_schema(out).field("messages").type.value_type.field("tool_calls").type.value_type
    assert isinstance(field, pa.JsonType)
    dataset = datasets.Dataset.from_parquet(out)
    got = [row["messages"][1]["tool_calls"][0]["function"]["arguments"] for row in dataset]
    assert got == calls, "no row gained the other row's keys"
    text = pl.read_parquet(out)["messages"][0][1]["tool_calls"][0]
    assert orjson.loads(text)["function"]["arguments"] == calls[0]


def test_an_aborted_writer_leaves_no_file(tmp_path):
    writer = (
        default_registry().create("exporter", "parquet").open(str(tmp_path / "x.parquet"), schema=rows.schema("sft"))
    )
    writer.write_batch([{"messages": [{"role": "user", "content": "hi"}], "score": 1.0}])
    writer.abort()
    assert list(tmp_path.iterdir()) == []


def test_nenyax_export_to_parquet_from_the_command_line(mixed):
    done = subprocess.run(
        [sys.executable, "-m", "nenyax.cli", "export", str(mixed), "--to", "parquet", "--rows", "dpo", "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    said = orjson.loads(done.stdout)
    assert said["destination"] == str(mixed / "dpo.parquet")
    assert said["written"] == 1
    assert pl.read_parquet(said["destination"]).columns[:3] == ["prompt", "chosen", "rejected"]
    wrong = subprocess.run(
        [sys.executable, "-m", "nenyax.cli", "export", str(mixed), "--to", "parqet"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert wrong.returncode == 2
    assert wrong.stderr.strip() == "Error: No exporter named 'parqet' is installed. Did you mean 'parquet'?"
