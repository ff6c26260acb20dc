"""``nenyax export SOURCE --to FORMAT --rows SHAPE``: a run's trajectories as rows for a trainer or a data frame.

SOURCE is a run directory (`nenyax eval` wrote it) or a trajectories.jsonl. The work is
`nenyax.core.engine.export.export`; exporters are plugins (``jsonl`` in core, ``parquet`` and ``hf`` in
their own distributions), found by name, so an unknown one gets suggestions like any plugin.
"""

from __future__ import annotations

from pathlib import Path

import click
import orjson

from nenyax.core.engine.export import export


@click.command("export")
@click.argument("source", type=click.Path(path_type=Path))
@click.option("--to", "to", default="jsonl", show_default=True, help="Exporter: jsonl, parquet, hf (or any installed).")
@click.option("--rows", "shape", default="raw", show_default=True, help="Row shape: raw, sft, dpo, merged or steps.")
@click.option("--out", type=click.Path(path_type=Path), help="Destination (default: beside SOURCE, named by shape).")
@click.option("--min-score", type=float, help="sft: leave out trajectories scored below this.")
@click.option(
    "--tokenized", is_flag=True, help="sft: the exact recorded input_ids and assistant_masks instead of messages."
)
@click.option("--json", "as_json", is_flag=True, help="Print what was written as JSON.")
def export_command(
    source: Path, to: str, shape: str, out: Path | None, min_score: float | None, tokenized: bool, as_json: bool
) -> None:
    """Write SOURCE's trajectories as raw, sft or dpo rows with the exporter --to."""
    result = export(source, to=to, rows=shape, out=out, min_score=min_score, tokenized=tokenized)
    if as_json:
        data = {
            "destination": result.destination,
            "exporter": result.exporter,
            "rows": result.shape,
            "tokenized": result.tokenized,
            "trajectories": result.trajectories,
            "written": result.rows,
            "cut_off": result.cut_off_note,
        }
        click.echo(orjson.dumps(data).decode())
        return
    shape_name = f"{result.shape} (tokenized)" if result.tokenized else result.shape
    click.echo(
        f"Wrote {result.rows:,} {shape_name} row(s) from {result.trajectories:,} trajectories to {result.destination}"
    )
    if result.cut_off_note:
        click.echo(f"Note: {result.cut_off_note}; the complete records before it were exported.", err=True)
