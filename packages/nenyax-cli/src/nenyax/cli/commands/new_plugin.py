"""``nenyax new-plugin KIND NAME``: scaffold a plugin distribution that passes its kind's conformance kit."""

from __future__ import annotations

from pathlib import Path

import click
import orjson

from nenyax.cli.scaffold import package_name, write
from nenyax.core.kinds import KINDS


@click.command("new-plugin")
@click.argument("kind", metavar="KIND")
@click.argument("name", metavar="NAME")
@click.option(
    "--dir",
    "directory",
    type=click.Path(path_type=Path),
    default=Path("."),
    show_default=True,
    help="The folder to write nenyax-NAME/ in.",
)
@click.option("--json", "as_json", is_flag=True, help="Print what was written as JSON.")
def new_plugin_command(kind: str, name: str, directory: Path, as_json: bool) -> None:
    """Write DIR/nenyax-NAME/, a distribution with a KIND plugin named NAME.

    KIND is one of adapter, provider, judge, sandbox, learner, exporter, tracer. The distribution installs
    (pip install -e '.[test]'), passes its own tests and nenyax KIND-check NAME as written; edit it from there.
    """
    target, files = write(kind, name, directory)
    check = f"nenyax {KINDS[kind].check_command} {name}"
    if as_json:
        data = {"kind": kind, "name": name, "package": package_name(name), "path": str(target), "files": files}
        click.echo(orjson.dumps({**data, "check": check}, option=orjson.OPT_INDENT_2))
        return
    click.echo(f"Wrote the {kind} plugin {name!r} to {target}/ ({len(files)} files). Next:")
    click.echo(f"  cd {target}")
    click.echo("  pip install -e '.[test]'")
    click.echo("  pytest")
    click.echo(f"  {check} --strict")
