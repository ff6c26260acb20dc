"""The one exit-code convention of every command, and how an error is reported (a sentence or JSON)."""

from __future__ import annotations

import sys
from typing import NoReturn

import click
import orjson

SUCCESS = 0
FAILURE = 1
"""The command ran and its result is a failure (a tier below --require, an episode that is not ok)."""
USER_ERROR = 2
INTERRUPTED = 130
"""Ctrl-C (SIGINT), as shells report a process killed by signal 2."""

EXIT_CODES_HELP = (
    "0 success; 1 the command ran and the result is a failure (a tier below --require, an episode that did not "
    "end ok); 2 a user error (bad URI, option or path); 130 interrupted (Ctrl-C)."
)


def report_error(message: str, code: int, as_json: bool, *, kind: str | None = None) -> NoReturn:
    """Print `message` (one sentence) and exit with `code`; with --json, a JSON object on stdout too."""
    if kind is None:
        kind = "usage" if code == USER_ERROR else "interrupted" if code == INTERRUPTED else "error"
    if as_json:
        data = {"error": {"kind": kind, "message": message, "exit_code": code}}
        click.echo(orjson.dumps(data, option=orjson.OPT_INDENT_2))
    from nenyax.cli.safe import neutral  # a message may quote a URI or a server's reply: no terminal codes

    shown = neutral(message)
    click.echo(f"Error: {shown}" if kind != "interrupted" else shown, err=True)
    sys.exit(code)
