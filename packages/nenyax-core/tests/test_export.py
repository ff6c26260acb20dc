"""`export` with core's own ``jsonl`` exporter: the rows it writes, and the bad input it refuses in one sentence.

The trajectories are ones the real engine recorded (tests/fixtures/export/README.md); the exporter is
found through the real entry point of nenyax-core, as any exporter is.
"""

from __future__ import annotations

import base64
import shutil
from pathlib import Path

import numpy as np
import orjson
import pytest

from nenyax.core import ExportResult, export
from nenyax.core.contract import rows
from nenyax.core.engine.rundirs import TRAJECTORIES
from nenyax.core.errors import UnknownPluginError, UsageError
from nenyax.core.plugins.exporter import Exporter, RowWriter
from nenyax.core.plugins.registry import default_registry

FIXTURES = Path(__file__).parent / "fixtures" / "export"


@pytest.fixture
def mixed(tmp_path):
    """A run directory mixing a question/answer env (reasoning_gym) and a Gymnasium one (CartPole)."""
    run = tmp_path / "run"
    run.mkdir()
    lines = (FIXTURES / "basic_arithmetic.jsonl").read_bytes() + (FIXTURES / "cartpole.jsonl").read_bytes()
    (run / TRAJECTORIES).write_bytes(lines)
    return run


def _lines(path):
    return [orjson.loads(line) for line in Path(path).read_bytes().splitlines()]


def test_jsonl_is_core_s_own_exporter_and_follows_the_interface(tmp_path):
    exporter = default_registry().create("exporter", "jsonl")
    assert isinstance(exporter, Exporter)
    assert exporter.suffix == ".jsonl"
    writer = exporter.open(str(tmp_path / "x.jsonl"), schema=rows.schema("raw"))
    assert isinstance(writer, RowWriter)
    writer.write_batch([{"id": "a"}])
    writer.abort()
    assert list(tmp_path.iterdir()) == []


def test_raw_rows_of_a_mixed_run_have_one_set_of_keys_and_arrays_as_base64_bytes(mixed):
    result = export(mixed, to="jsonl", rows="raw")
    assert isinstance(result, ExportResult)
    assert result.destination == str(mixed / "raw.jsonl")
    assert (result.trajectories, result.rows, result.cut_off_note) == (10, 10, None)
    written = _lines(result.destination)
    assert {tuple(r) for r in written} == {rows.schema("raw").names}
    assert {r["env_uri"] for r in written} == {"reasoning_gym:basic_arithmetic", "gymnasium:CartPole-v1"}
    cart = next(r for r in written if r["env_uri"].startswith("gymnasium"))
    obs = cart["steps"][0]["observation"]
    assert obs["type"] == "ndarray"
    recorded = orjson.loads((FIXTURES / "cartpole.jsonl").read_bytes().splitlines()[0])["steps"][0]["observation"]
    values = np.frombuffer(base64.b64decode(obs["data"]), dtype="<f4")
    assert values.tolist() == pytest.approx(recorded["values"], abs=0)


def test_sft_and_dpo_rows_are_trl_s_conversational_format(mixed):
    sft = _lines(export(mixed, rows="sft").destination)
    assert len(sft) == 8
    assert sft[0]["messages"][-1]["role"] == "assistant"
    assert set(sft[0]["messages"][0]) == {"role", "content"}, "no null keys a chat template would trip on"
    dpo = _lines(export(mixed, rows="dpo").destination)
    assert len(dpo) == 1
    assert dpo[0]["score_chosen"] > dpo[0]["score_rejected"]
    tokens = export(mixed, rows="sft", tokenized=True)
    assert tokens.destination == str(mixed / "sft-tokens.jsonl")
    assert all(len(r["input_ids"]) == len(r["assistant_masks"]) for r in _lines(tokens.destination))
    assert len(_lines(export(mixed, rows="sft", min_score=0.001).destination)) == 1


def test_a_cut_off_last_line_exports_the_complete_records_and_says_what_was_left(tmp_path):
    whole = (FIXTURES / "cartpole.jsonl").read_bytes()
    source = tmp_path / "killed.jsonl"
    source.write_bytes(whole[: whole.index(b"\n") + 1] + whole[whole.index(b"\n") + 1 : -200])
    result = export(source, rows="raw")
    assert result.destination == str(tmp_path / "killed.raw.jsonl")
    assert (result.trajectories, result.rows) == (1, 1)
    assert result.cut_off_note.startswith("left ")
    assert "cut-off last line" in result.cut_off_note
    assert len(_lines(result.destination)) == 1


def test_an_empty_file_or_one_with_no_row_of_the_shape_is_refused_and_writes_nothing(tmp_path, mixed):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with pytest.raises(UsageError, match=r"holds no complete trajectory; there is nothing to export\.$"):
        export(empty)
    cart = tmp_path / "cart.jsonl"
    shutil.copy(FIXTURES / "cartpole.jsonl", cart)
    with pytest.raises(UsageError, match=r"^None of the 2 trajectories of .* makes a row of the sft shape"):
        export(cart, rows="sft")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cart.jsonl", "empty.jsonl", "run"]


def test_unknown_names_and_paths_are_one_sentence_with_suggestions(tmp_path, mixed):
    with pytest.raises(UnknownPluginError, match=r"^No exporter named 'jsnl' is installed\. Did you mean 'jsonl'\?"):
        export(mixed, to="jsnl")
    with pytest.raises(UsageError, match=r"^There is no row shape 'rwa'\. Did you mean 'raw'\?$"):
        export(mixed, rows="rwa")
    with pytest.raises(UsageError, match=r"does not exist; name a run directory or a trajectories\.jsonl"):
        export(tmp_path / "nowhere")
    with pytest.raises(UsageError, match=r"holds no trajectories\.jsonl"):
        export(tmp_path)
    with pytest.raises(UsageError, match="is the file being exported"):
        export(mixed, out=mixed / TRAJECTORIES)


def test_the_destination_is_replaced_whole_and_only_once_complete(mixed):
    out = mixed / "rows.jsonl"
    out.write_bytes(b"old\n")
    export(mixed, out=out, rows="dpo")
    assert len(_lines(out)) == 1
    with pytest.raises(UsageError):
        export(FIXTURES / "cartpole.jsonl", out=out, rows="sft")
    assert len(_lines(out)) == 1, "a refused export leaves the old file as it was"
    assert [p.name for p in mixed.iterdir() if p.name.startswith(".")] == [], "no partial file is left behind"


def test_merged_and_steps_rows_are_the_recorded_ids_and_logprobs_for_a_trainer(mixed):
    from nenyax.core.engine.sinks import read_trajectories

    played = [t for t in read_trajectories(mixed / TRAJECTORIES) if t.model_calls]
    for shape in ("merged", "steps"):
        result = export(mixed, rows=shape)
        assert result.destination == str(mixed / f"{shape}.jsonl")
        written = _lines(result.destination)
        assert len(written) == len(played)  # single-call episodes; CartPole made no model call, so no row
        for row, traj in zip(written, played, strict=True):
            call = traj.model_calls[0]
            assert row["prompt_ids"] == list(call.prompt_token_ids)
            assert row["completion_ids"] == list(call.completion_token_ids)
            assert row["logprobs"] == pytest.approx(list(call.logprobs), abs=0)
            assert row["loss_mask"] == [1] * len(call.completion_token_ids)
            assert row["trainable"] is traj.status.trainable
            assert row["reward"] == (traj.score if traj.status.trainable else None)


def test_a_run_without_token_ids_makes_no_sample_row_and_says_what_one_needs(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / TRAJECTORIES).write_bytes((FIXTURES / "cartpole.jsonl").read_bytes())  # no model call at all
    with pytest.raises(UsageError, match=r"makes a row of the merged shape: one needs a model call recorded with"):
        export(run, rows="merged")
    assert sorted(p.name for p in run.iterdir()) == [TRAJECTORIES]
