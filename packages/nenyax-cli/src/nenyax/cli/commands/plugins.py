"""``nenyax plugins``: every installed plugin by kind, with its distribution and load errors."""

from __future__ import annotations

import click
import orjson

from nenyax.core.kinds import KINDS
from nenyax.core.plugins.registry import default_registry


@click.command("plugins")
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
def plugins_command(as_json: bool) -> None:
    """List installed plugins by kind, and any that failed to load."""
    registry = default_registry()
    rows = [
        {
            "kind": e.spec.kind,
            "name": e.spec.name,
            "summary": e.spec.summary,
            "factory": e.spec.factory,
            "plugin": e.plugin,
            "distribution": e.distribution,
            "version": e.version,
        }
        for e in registry.all_entries()
    ]
    failures = [{"plugin": f.plugin, "distribution": f.distribution, "error": f.error} for f in registry.failures]
    if as_json:
        click.echo(orjson.dumps({"plugins": rows, "failures": failures}, option=orjson.OPT_INDENT_2))
        return
    from rich.console import Console
    from rich.table import Table

    from nenyax.cli.safe import safe_text

    console = Console()
    table = Table(title="Installed nenyax plugins")
    for column in ("kind", "name", "distribution"):
        table.add_column(column, no_wrap=True)
    table.add_column("summary")
    for kind in KINDS:
        for row in (r for r in rows if r["kind"] == kind):
            dist = f"{row['distribution'] or '?'} {row['version'] or ''}".strip()
            table.add_row(kind, safe_text(str(row["name"])), safe_text(dist), safe_text(row["summary"] or ""))
    console.print(table)
    for failure in failures:
        where = f"{failure['plugin']} ({failure['distribution'] or 'unknown'}): {failure['error']}"
        console.print(safe_text("failed to load ", style="red") + safe_text(where))
