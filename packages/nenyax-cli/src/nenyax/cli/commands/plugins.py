"""``nenyax plugins``: every installed plugin by kind, with its distribution and load errors."""

from __future__ import annotations

import click
import orjson

from nenyax.cli.versions import installed_servers
from nenyax.core.kinds import KINDS
from nenyax.core.plugins.registry import default_registry


@click.command("plugins")
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
def plugins_command(as_json: bool) -> None:
    """List installed plugins by kind, the servers commands import (nenyax serve's), and load failures."""
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
    servers = installed_servers()
    if as_json:
        data = {"plugins": rows, "servers": servers, "failures": failures}
        click.echo(orjson.dumps(data, option=orjson.OPT_INDENT_2))
        return
    from rich.console import Console

    from nenyax.cli.safe import safe_text
    from nenyax.cli.tables import Cell, print_table

    console = Console()
    table: list[list[Cell]] = []
    for kind in KINDS:
        for row in (r for r in rows if r["kind"] == kind):
            dist = f"{row['distribution'] or '?'} {row['version'] or ''}".strip()
            table.append([kind, safe_text(str(row["name"])), safe_text(dist), safe_text(row["summary"] or "")])
    for server in servers:  # not a plugin kind: the import seam of a command
        dist = f"{server['distribution']} {server['version']}"
        kind = "server" if server["used_by"] == "nenyax serve" else "backend"
        table.append([kind, server["name"], safe_text(dist), f"used by {server['used_by']}"])
    columns = ["kind", "name", "distribution", "summary"]
    print_table(console, "Installed nenyax plugins", columns, table, wrap="summary")
    for failure in failures:
        where = f"{failure['plugin']} ({failure['distribution'] or 'unknown'}): {failure['error']}"
        console.print(safe_text("failed to load ", style="red") + safe_text(where))
