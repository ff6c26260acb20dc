"""The ``hf`` exporter: a dataset folder `datasets.load_from_disk` reads, tool-call arguments kept exact.

The trajectories are the ones nenyax-core's tests use, recorded by the real engine
(packages/nenyax-core/tests/fixtures/export/README.md).
"""

from __future__ import annotations

from pathlib import Path

import attrs
import datasets
import orjson
import pytest

from nenyax.core import export, serde
from nenyax.core.contract import rows
from nenyax.core.contract.trajectory import Trajectory
from nenyax.core.engine.rundirs import TRAJECTORIES
from nenyax.core.engine.sinks import read_trajectories
from nenyax.core.plugins.exporter import Exporter
from nenyax.core.plugins.registry import default_registry
from nenyax.testing import CHECKS, Subject, Verdict, run_check

FIXTURES = Path(__file__).parents[2] / "nenyax-core" / "tests" / "fixtures" / "export"
ARGUMENTS = [{"room": "living", "state": "on"}, {"x": 1, "y": 2}]


@pytest.fixture
def with_tools(tmp_path):
    """Two recorded trajectories given tool calls whose arguments have different keys."""
    base = next(iter(read_trajectories(FIXTURES / "basic_arithmetic.jsonl")))
    made = []
    for n, arguments in enumerate(ARGUMENTS):
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
        made.append(attrs.evolve(base, messages=messages, id=f"t{n}"))
    source = tmp_path / "tools.jsonl"
    source.write_bytes(b"".join(serde.dumps(t) + b"\n" for t in made))
    return source


@pytest.mark.parametrize("check", CHECKS["exporter"], ids=lambda c: c.id)
def test_the_exporter_conformance_kit_passes(check):
    found = run_check(check, Subject.from_registry("exporter", "hf", default_registry()))
    assert found.verdict is Verdict.PASSED, (found.reason, [f.message for f in found.findings])


def test_the_plugin_is_installed_as_an_exporter():
    exporter = default_registry().create("exporter", "hf")
    assert isinstance(exporter, Exporter)
    assert exporter.suffix == ".hf"


def test_from_list_alone_merges_struct_keys_across_rows_and_corrupts_tool_arguments(with_tools):
    """Why the exporter declares `datasets.Json`: the same rows through plain `Dataset.from_list` come back wrong."""
    sft = list(rows.rows(read_trajectories(with_tools), "sft"))
    plain = datasets.Dataset.from_list(sft)
    corrupted = plain[0]["messages"][1]["tool_calls"][0]["function"]["arguments"]
    assert corrupted == {"room": "living", "state": "on", "x": None, "y": None}


def test_the_hf_export_keeps_tool_arguments_exact(with_tools):
    result = export(with_tools, to="hf", rows="sft")
    assert result.destination == str(with_tools.with_name("tools.sft.hf"))
    dataset = datasets.load_from_disk(result.destination)
    assert isinstance(dataset.features["messages"].feature["tool_calls"].feature, datasets.Json)
    got = [row["messages"][1]["tool_calls"][0]["function"]["arguments"] for row in dataset]
    assert got == ARGUMENTS


def test_a_mixed_run_is_one_dataset(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    lines = (FIXTURES / "basic_arithmetic.jsonl").read_bytes() + (FIXTURES / "cartpole.jsonl").read_bytes()
    (run / TRAJECTORIES).write_bytes(lines)
    dataset = datasets.load_from_disk(export(run, to="hf", rows="raw").destination)
    assert dataset.num_rows == 10
    assert set(dataset["env_uri"]) == {"reasoning_gym:basic_arithmetic", "gymnasium:CartPole-v1"}
    cart = dataset.filter(lambda r: r["env_uri"].startswith("gymnasium"))
    assert cart[0]["steps"][0]["observation"]["dtype"] == "float32"
    assert serde.loads(cart[0]["record"], Trajectory).env_uri == "gymnasium:CartPole-v1"


def test_an_export_replaces_the_folder_whole_and_an_aborted_one_leaves_it(tmp_path, with_tools):
    out = tmp_path / "ds"
    export(with_tools, to="hf", rows="sft", out=out)
    export(with_tools, to="hf", rows="raw", out=out)
    assert datasets.load_from_disk(str(out)).column_names == list(rows.schema("raw").names)
    writer = default_registry().create("exporter", "hf").open(str(out), schema=rows.schema("sft"))
    writer.write_batch([{"messages": [{"role": "user", "content": "hi"}]}])
    writer.abort()
    assert datasets.load_from_disk(str(out)).num_rows == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds", "tools.jsonl"]
