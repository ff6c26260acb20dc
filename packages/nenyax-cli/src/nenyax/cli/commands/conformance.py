"""``nenyax <kind>-check NAME``: run a kind's conformance kit on an installed plugin.

One command per kind that has a kit (`nenyax.core.kinds.Kind.kit`), made from the kinds table:
``adapter_check_command`` and its siblings are built on first use by this module's ``__getattr__``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import click
import orjson

from nenyax.cli.params import plugin_options
from nenyax.core.contract import serde
from nenyax.core.contract.checking import CheckResult, Verdict
from nenyax.core.kinds import KINDS

if TYPE_CHECKING:
    from rich.console import Console

    from nenyax.testing import KitReport

_STYLE = {Verdict.PASSED: "green", Verdict.FAILED: "red", Verdict.SKIPPED: "yellow", Verdict.ERROR: "magenta"}


def parse_options(pairs: tuple[str, ...]) -> dict[str, Any]:
    """``--option KEY=VALUE`` pairs as the plugin factory's keyword options."""
    return plugin_options(pairs, "base_url=http://127.0.0.1:8000/v1")


def run_conformance(
    kind: str, name: str, as_json: bool, strict: bool, options: Mapping[str, Any] | None = None
) -> None:
    """Run every `kind` check on plugin `name` built with `options`, print a table (or JSON), exit 1 when one
    failed or crashed."""
    from nenyax.testing import CHECKS, KitReport, Subject  # the kit loads every kind's checks: only here

    subject = Subject.from_environment(kind=kind, name=name, options=options)
    subject.entry  # noqa: B018 - an unknown name fails here, with suggestions, before any check runs
    report = KitReport.of(CHECKS[kind], subject)
    if as_json:
        click.echo(orjson.dumps(report_data(report, strict), option=orjson.OPT_INDENT_2))
    else:
        from rich.console import Console

        print_results(Console(), f"nenyax {kind}-check {name}", report.results, strict)
    sys.exit(0 if report.passed(strict) else 1)


def print_results(console: Console, title: str, results: Iterable[CheckResult], strict: bool = False) -> None:
    """One table of check results, for `nenyax check URI` and `nenyax <kind>-check NAME` alike: each check's id,
    outcome (with `strict`, a warning fails it), time, and evidence (its findings, then what it said)."""
    from nenyax.cli.safe import safe_text
    from nenyax.cli.tables import Cell, print_table

    rows: list[list[Cell]] = []
    for r in results:
        verdict = Verdict.FAILED if r.failed(strict) else r.outcome
        said = "\n".join([f.message for f in r.findings] + ([r.evidence] if r.evidence else []))
        # Evidence quotes the subject (observations, errors, a plugin's messages): data, never markup.
        rows.append([r.id, f"[{_STYLE[verdict]}]{verdict.value}[/]", f"{r.seconds:.2f}s", safe_text(said)])
    print_table(console, safe_text(title), ["check", "outcome", "time", "evidence"], rows, wrap="evidence")


def report_data(report: KitReport, strict: bool) -> dict[str, Any]:
    """The report as serde writes it, as `nenyax check --json` writes a tier report (``results``), with the kit's
    older keys beside it: ``passed`` (under `strict`), and ``checks`` (``verdict``, ``passed``, ``reason``)."""
    data: dict[str, Any] = serde.to_data(report)
    data["passed"] = report.passed(strict)
    data["checks"] = [
        {
            "id": r.id,
            "verdict": "failed" if r.failed(strict) else r.outcome.value,
            "passed": r.ok(strict),
            "reason": r.evidence,
            "findings": [{"severity": f.severity.value, "message": f.message} for f in r.findings],
        }
        for r in report.results
    ]
    return data


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
