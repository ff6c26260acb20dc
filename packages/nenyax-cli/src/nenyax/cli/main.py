"""The click application. Commands are imported lazily so ``nenyax --help`` stays fast."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from nenyax.cli._version import __version__
from nenyax.core.errors import NenyaxError

# name -> (module, attribute, one-line help). Importing the module is deferred until it runs.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "check": ("nenyax.cli.commands.check", "check_command", "Measure the highest tier an environment reaches."),
    "eval": (
        "nenyax.cli.commands.eval_",
        "eval_command",
        "Evaluate a model or policy on many tasks into a run directory.",
    ),
    "list": ("nenyax.cli.commands.list_", "list_command", "List the environments each installed adapter can load."),
    "plugins": ("nenyax.cli.commands.plugins", "plugins_command", "List installed plugins by kind."),
    "try": ("nenyax.cli.commands.try_", "try_command", "Play one episode with a model and replay it."),
    "serve": ("nenyax.cli.commands.serve", "serve_command", "Serve a step-mode environment as an OpenEnv server."),
    "view": ("nenyax.cli.commands.view", "view_command", "Write an HTML page listing a run's episodes."),
    "adapter-check": (
        "nenyax.cli.commands.conformance",
        "adapter_check_command",
        "Run the adapter conformance kit on an installed adapter.",
    ),
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use, and whose errors are one sentence."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, attr, _ = COMMANDS[cmd_name]
        return getattr(importlib.import_module(module), attr)  # type: ignore[no-any-return]

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Help text comes from the table, so `nenyax --help` imports no command module.
        with formatter.section("Commands"):
            formatter.write_dl([(name, COMMANDS[name][2]) for name in sorted(COMMANDS)])

    def main(self, *args: Any, **kwargs: Any) -> Any:
        # Click's own usage errors print usage, a hint and the error on four lines; one sentence
        # (with where to look) is what every other mistake gets here.
        kwargs["standalone_mode"] = False
        try:
            return super().main(*args, **kwargs)
        except click.UsageError as exc:
            message = exc.format_message().rstrip()
            message += "" if message.endswith((".", "?", "!")) else "."
            where = f" See '{exc.ctx.command_path} --help'." if exc.ctx is not None else ""
            click.echo(f"Error: {message}{where}", err=True)
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            click.echo(f"Error: {exc.format_message()}", err=True)
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("Aborted.", err=True)
            sys.exit(1)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except NenyaxError as exc:
            click.echo(f"Error: {exc}", err=True)
            sys.exit(exc.exit_code)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="nenyax")
def cli() -> None:
    """Nenyax: one contract for every RL environment.

    Load any installed format by URI (<format>:<name>?key=value), check what it really
    does, and play an episode to watch it.
    """
