"""The click application. Commands are imported lazily so ``nenyax --help`` stays fast."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from nenyax.cli import deadline
from nenyax.cli.exits import EXIT_CODES_HELP, INTERRUPTED, USER_ERROR, report_error
from nenyax.core.errors import BadURIError, NenyaxError, did_you_mean
from nenyax.core.kinds import KINDS

# name -> (module, attribute, one-line help). Importing the module is deferred until it runs.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "check": ("nenyax.cli.commands.check", "check_command", "Measure the highest tier an environment reaches."),
    "eval": (
        "nenyax.cli.commands.eval_",
        "eval_command",
        "Evaluate a model or policy on many tasks into a run directory.",
    ),
    "export": (
        "nenyax.cli.commands.export",
        "export_command",
        "Export a run's trajectories as raw, SFT, DPO or token-sample rows.",
    ),
    "export-tasks": (
        "nenyax.cli.commands.export_tasks",
        "export_tasks_command",
        "Write an environment's tasks as prompt rows for a trainer's data loader.",
    ),
    "judge": (
        "nenyax.cli.commands.judge",
        "judge_command",
        "Judge a recorded run again with other judges, replaying nothing.",
    ),
    "list": ("nenyax.cli.commands.list_", "list_command", "List the environments each installed adapter can load."),
    "new-plugin": (
        "nenyax.cli.commands.new_plugin",
        "new_plugin_command",
        "Write a new plugin distribution of any kind that passes its conformance kit.",
    ),
    "plugins": ("nenyax.cli.commands.plugins", "plugins_command", "List installed plugins by kind."),
    "try": ("nenyax.cli.commands.try_", "try_command", "Play one episode with a model and replay it."),
    "serve": ("nenyax.cli.commands.serve", "serve_command", "Serve a step-mode environment as an OpenEnv server."),
    "serve-model": (
        "nenyax.cli.commands.serve_model",
        "serve_model_command",
        "Serve a model as an OpenAI-compatible server with vLLM-style token ids.",
    ),
    "view": ("nenyax.cli.commands.view", "view_command", "Write an HTML page listing a run's episodes."),
    "train": (
        "nenyax.cli.commands.train",
        "train_command",
        "Improve a model with a learner, keeping each round only if held-out improves.",
    ),
}
# `nenyax <kind>-check NAME`, one per kind with a conformance kit, from the kinds table.
COMMANDS.update(
    {
        kind.check_command: (
            "nenyax.cli.commands.conformance",
            f"{kind.name}_check_command",
            f"Run the {kind.name} conformance kit on an installed {kind.name}.",
        )
        for kind in KINDS.values()
        if kind.kit
    }
)


def _no_kit(name: str) -> str | None:
    """The sentence for ``nenyax <kind>-check`` where that kind has no conformance kit yet, else None."""
    kind = KINDS.get(name.removesuffix("-check"))
    if kind is None or kind.kit or name != kind.check_command:
        return None
    have = ", ".join(k.check_command for k in KINDS.values() if k.kit)
    return f"There is no conformance kit for {kind.name} plugins yet, so no `nenyax {name}` (kits exist for: {have})."


def _wants_json(args: list[str]) -> bool:
    # Errors can happen before click has parsed anything (an unknown option, a bad value), so the
    # flag is read from the raw arguments: everything before a literal `--`.
    head = args[: args.index("--")] if "--" in args else args
    return "--json" in head


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use, and whose errors are one sentence."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, attr, _ = COMMANDS[cmd_name]
        return getattr(importlib.import_module(module), attr)  # type: ignore[no-any-return]

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if name and _no_kit(name):
            raise click.UsageError(_no_kit(name) or "", ctx)
        if name and not name.startswith("-") and name not in COMMANDS:
            msg = f"There is no command {name!r}." + did_you_mean(name, COMMANDS, "command")
            raise click.UsageError(msg, ctx)
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Help text comes from the table, so `nenyax --help` imports no command module.
        with formatter.section("Commands"):
            formatter.write_dl([(name, COMMANDS[name][2]) for name in sorted(COMMANDS)])

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Exit codes"):
            formatter.write_text(EXIT_CODES_HELP)

    def main(self, args: Any = None, *rest: Any, **kwargs: Any) -> Any:
        # Click's own usage errors print usage, a hint and the error on four lines; one sentence
        # (with where to look) is what every other mistake gets here, or a JSON object with --json.
        deadline.start_clock()  # --timeout counts from here: loading what the command needs counts too
        argv = self.argv = list(sys.argv[1:] if args is None else args)
        as_json = self.as_json = _wants_json(argv)
        kwargs["standalone_mode"] = False
        try:
            result = super().main(argv, *rest, **kwargs)
        except click.UsageError as exc:
            message = exc.format_message().rstrip()
            message += "" if message.endswith((".", "?", "!")) else "."
            where = f" See '{exc.ctx.command_path} --help'." if exc.ctx is not None else ""
            report_error(f"{message}{where}", USER_ERROR, as_json, kind="usage")
        except click.ClickException as exc:
            report_error(exc.format_message(), exc.exit_code, as_json, kind="usage")
        except click.Abort as exc:
            # Click turns Ctrl-C into Abort; EOF on a prompt is the other cause (no prompt exists yet).
            code = INTERRUPTED if isinstance(exc.__context__, KeyboardInterrupt) else 1
            report_error("Interrupted." if code == INTERRUPTED else "Aborted.", code, as_json, kind="interrupted")
        except KeyboardInterrupt:
            report_error("Interrupted.", INTERRUPTED, as_json, kind="interrupted")
        # standalone_mode=False returns the exit code of `ctx.exit(n)` (e.g. --help) instead of exiting.
        sys.exit(result if isinstance(result, int) else 0)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except NenyaxError as exc:
            message = str(exc)
            if isinstance(exc, BadURIError):
                message += _path_hint(message, getattr(self, "argv", []))
            report_error(message, exc.exit_code, getattr(self, "as_json", False))


def _path_hint(message: str, argv: list[str]) -> str:
    """The URI that reads a file the user gave without a format (``./qa.jsonl``), when the rejected URI
    quoted in `message` is one of `argv`'s words; else an empty string."""
    from nenyax.core.toolkit.suggest import uri_for_path

    for word in argv:
        if repr(word) in message and (hint := uri_for_path(word)):
            return hint
    return ""


def _show_warnings() -> None:
    """Print nenyax's warnings (a model server's retries, as they happen) on stderr, one line each."""
    import logging

    logger = logging.getLogger("nenyax")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.WARNING)


def _print_versions(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from nenyax.cli.versions import installed_versions

    for name, version in installed_versions():
        click.echo(f"{name} {version}")
    ctx.exit(0)


@click.group(
    cls=LazyGroup,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_versions,
    help="Show the versions of nenyax-core, nenyax-cli and every installed plugin distribution.",
)
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Nenyax: one contract for every RL environment.

    Load any installed format by URI (<format>:<name>?key=value), check what it really
    does, and play an episode to watch it.
    """
    _show_warnings()
    if ctx.invoked_subcommand is None:  # bare `nenyax`: the help, and success
        click.echo(ctx.get_help())
        ctx.exit(0)


def run() -> None:
    """The ``nenyax`` program: `cli`, and a Ctrl-C arriving while the interpreter shuts down (joining a model's
    worker thread) cannot turn a finished command into a death by signal: its own exit code stands."""
    import gc
    import signal

    from nenyax.cli.stop import leave

    try:
        cli()
    except SystemExit as exc:
        if exc.code == INTERRUPTED:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            leave(INTERRUPTED)  # a thread blocked on a silent server must not hold the exit
        raise
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        # The interpreter's last act is a cycle collection over every object still alive: with torch and
        # transformers imported, 0.8 s of a CPU spent on a process that is ending (1.2 s of a Ctrl-C's 1.3).
        # Frozen objects are skipped; the rest of the shutdown (atexit, threads joined, files closed) is not.
        gc.freeze()
