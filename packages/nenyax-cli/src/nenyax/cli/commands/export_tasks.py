"""``nenyax export-tasks URI --to FORMAT``: an environment's tasks as prompt rows, a trainer's dataset.

The work is `nenyax.core.engine.export_tasks.export_tasks`; exporters are plugins (``jsonl`` in core,
``parquet`` and ``hf`` in their own distributions).
"""

from __future__ import annotations

from pathlib import Path

import click
import orjson

from nenyax.core.engine.export_tasks import export_tasks


@click.command("export-tasks")
@click.argument("uri")
@click.option("--to", "to", default="jsonl", show_default=True, help="Exporter: jsonl, parquet, hf (or any installed).")
@click.option("--out", type=click.Path(path_type=Path), help="Destination (default: tasks.<ext> here).")
@click.option("--split", help="The split to list (default: the environment's own).")
@click.option("--limit", type=int, help="At most this many tasks, in the environment's order.")
@click.option("--json", "as_json", is_flag=True, help="Print what was written as JSON.")
def export_tasks_command(
    uri: str, to: str, out: Path | None, split: str | None, limit: int | None, as_json: bool
) -> None:
    """Write URI's tasks as rows (prompt, task_id, env_uri, split, mode) with the exporter --to."""
    result = export_tasks(uri, to=to, out=out, split=split, limit=limit)
    if as_json:
        data = {"destination": result.destination, "exporter": result.exporter, "rows": result.rows}
        click.echo(orjson.dumps({**data, "prompts": result.prompts}).decode())
        return
    without = result.rows - result.prompts
    said = f" ({without:,} without a prompt: the environment builds it while it plays)" if without else ""
    click.echo(f"Wrote {result.rows:,} task row(s) to {result.destination}{said}")
