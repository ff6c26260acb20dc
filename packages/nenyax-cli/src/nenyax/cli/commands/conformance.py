"""``nenyax <kind>-check NAME``: run a kind's conformance kit on an installed plugin."""

from __future__ import annotations

import sys

import click
import orjson

from nenyax.testing import CHECKS, Report, Subject


def run_conformance(kind: str, name: str, as_json: bool, strict: bool) -> None:
    """Run every `kind` check on plugin `name`, print a table (or JSON), exit 1 on failure."""
    subject = Subject.from_environment(kind=kind, name=name)
    subject.entry  # noqa: B018 - an unknown name fails here, with suggestions, before any check runs
    report = Report.of(CHECKS[kind], subject)
    if as_json:
        data = {
            "kind": kind,
            "name": name,
            "passed": not report.failed(strict),
            "checks": [
                {
                    "id": o.check.id,
                    "passed": not o.failed(strict),
                    "findings": [{"severity": f.severity.value, "message": f.message} for f in o.findings],
                }
                for o in report.outcomes
            ],
        }
        click.echo(orjson.dumps(data, option=orjson.OPT_INDENT_2))
    else:
        from rich.console import Console

        from nenyax.cli.safe import safe_text
        from nenyax.cli.tables import Cell, print_table

        rows: list[list[Cell]] = [
            [
                o.check.id,
                "[red]failed[/]" if o.failed(strict) else "[green]passed[/]",
                safe_text("\n".join(f.message for f in o.findings)),
            ]
            for o in report.outcomes
        ]
        title = safe_text(f"nenyax {kind}-check {name}")
        print_table(Console(), title, ["check", "outcome", "findings"], rows, wrap="findings")
    sys.exit(1 if report.failed(strict) else 0)


@click.command("adapter-check")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--strict", is_flag=True, help="Warnings fail too.")
def adapter_check_command(name: str, as_json: bool, strict: bool) -> None:
    """Prove an installed adapter delivers what the adapter interface promises."""
    run_conformance("adapter", name, as_json, strict)
