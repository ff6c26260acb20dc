"""``nenyax <kind>-check NAME``: run a kind's conformance kit on an installed plugin.

One command per kind that has a kit (`nenyax.core.kinds.Kind.kit`), made from the kinds table:
``adapter_check_command`` and its siblings are built on first use by this module's ``__getattr__``.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

import click
import orjson

from nenyax.cli.params import plugin_options
from nenyax.core.kinds import KINDS
from nenyax.testing import CHECKS, Report, Subject, Verdict

_STYLE = {Verdict.PASSED: "green", Verdict.FAILED: "red", Verdict.SKIPPED: "yellow", Verdict.ERROR: "magenta"}


def parse_options(pairs: tuple[str, ...]) -> dict[str, Any]:
    """``--option KEY=VALUE`` pairs as the plugin factory's keyword options."""
    return plugin_options(pairs, "base_url=http://127.0.0.1:8000/v1")


def run_conformance(
    kind: str, name: str, as_json: bool, strict: bool, options: Mapping[str, Any] | None = None
) -> None:
    """Run every `kind` check on plugin `name` built with `options`, print a table (or JSON), exit 1 when one
    failed or crashed."""
    subject = Subject.from_environment(kind=kind, name=name, options=options)
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
                    "verdict": "failed" if o.failed(strict) else o.verdict.value,
                    "passed": o.ok(strict),
                    "reason": o.reason,
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

        rows: list[list[Cell]] = []
        for o in report.outcomes:
            verdict = Verdict.FAILED if o.failed(strict) else o.verdict
            said = "\n".join([f.message for f in o.findings] + ([o.reason] if o.reason else []))
            rows.append([o.check.id, f"[{_STYLE[verdict]}]{verdict.value}[/]", safe_text(said)])
        title = safe_text(f"nenyax {kind}-check {name}")
        print_table(Console(), title, ["check", "outcome", "findings"], rows, wrap="findings")
    sys.exit(1 if report.failed(strict) else 0)


def kind_check_command(kind: str) -> click.Command:
    """The ``nenyax <kind>-check NAME`` command of a kind with a kit."""

    @click.command(KINDS[kind].check_command)
    @click.argument("name")
    @click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
    @click.option("--strict", is_flag=True, help="Warnings fail too.")
    @click.option(
        "--option",
        "options",
        multiple=True,
        metavar="KEY=VALUE",
        help="An option the plugin's factory is given (base_url=http://127.0.0.1:8000/v1); repeatable.",
    )
    def command(name: str, as_json: bool, strict: bool, options: tuple[str, ...]) -> None:
        run_conformance(kind, name, as_json, strict, parse_options(options))

    command.help = f"Prove an installed {kind} delivers what the {kind} interface promises."
    return command


def __getattr__(name: str) -> Any:
    kind = name.removesuffix("_check_command")
    if name.endswith("_check_command") and kind in KINDS and KINDS[kind].kit:
        command = kind_check_command(kind)
        globals()[name] = command
        return command
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)
