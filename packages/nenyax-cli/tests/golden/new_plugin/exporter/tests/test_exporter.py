"""The `acme` exporter's own format: what the conformance kit cannot know it should write."""

import json

from nenyax.core.contract.rows import RowOptions, rows, schema
from nenyax.testing.checks.exporter import sample_trajectories

from nenyax_acme.exporter import AcmeExporter


def test_sft_rows_read_back_as_a_json_array(tmp_path):
    made = list(rows(sample_trajectories(), "sft", RowOptions()))
    writer = AcmeExporter().open(str(tmp_path / "sft.json"), schema=schema("sft", RowOptions()))
    writer.write_batch(made[:1])
    writer.write_batch(made[1:])
    where = writer.close()
    assert json.loads((tmp_path / "sft.json").read_text()) == json.loads(json.dumps(made))
    assert where == str(tmp_path / "sft.json")
