"""``nenyax serve URI``: any environment as a standard OpenEnv server (nenyax-server-openenv); one that runs its own
loop (rollout, task mode) is served loop-owning: its episodes run server-side against a policy URL the client names."""

from __future__ import annotations

import sys

import click
import orjson

from nenyax.core import UsageError

SERVER = "openenv"
"""The server `nenyax serve` uses, by its name in the ``nenyax.servers`` entry-point group
(`nenyax.core.plugins.seams`): the CLI never names a server's module."""


@click.command("serve")
@click.argument("uri")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="Port (0 picks a free one)."
)
@click.option(
    "--max-sessions", type=click.IntRange(min=1), default=1024, show_default=True, help="Most sessions open at once."
)
@click.option(
    "--idle-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=300.0,
    show_default=True,
    help="Seconds before a session without messages is closed.",
)
@click.option(
    "--max-frame-bytes",
    type=click.IntRange(min=1024),
    default=1 << 20,
    show_default=True,
    help="Largest message accepted; larger ones get an error frame.",
)
@click.option(
    "--share-reference",
    is_flag=True,
    help="Put the oracle's action in each state (field 'reference'), so that nenyax check "
    "'openenv:URL?reference=reference' can audit the served environment; every client can read the answers.",
)
@click.option("--json", "as_json", is_flag=True, help="Announce the server and its shutdown as JSON lines.")
def serve_command(
    uri: str,
    host: str,
    port: int,
    max_sessions: int,
    idle_timeout: float,
    max_frame_bytes: int,
    share_reference: bool,
    as_json: bool,
) -> None:
    """Serve URI with OpenEnv's routes (/ws, /reset, /step, /state, /schema, /metadata, /health, /mcp).

    OpenEnv's own clients use it unchanged; each episode's judgment rides in its final observation's
    metadata. Stops on SIGTERM (exit 0) or Ctrl-C (exit 130), closing every session first.
    """
    from nenyax.core.install import pip_install
    from nenyax.core.plugins import seams
    from nenyax.core.plugins.registry import import_factory

    target = seams.installed(seams.SERVERS).get(SERVER)
    if target is None:
        install = pip_install(seams.distribution_of(seams.SERVERS, SERVER) or "nenyax-server-openenv")
        msg = f"nenyax serve needs the OpenEnv server: install it with {install}."
        raise UsageError(msg)
    serve = import_factory(target)
    say = _json_line if as_json else click.echo
    sys.exit(
        serve(
            uri,
            host,
            port,
            max_sessions=max_sessions,
            idle_timeout=idle_timeout,
            max_frame_bytes=max_frame_bytes,
            say=say,
            reference=share_reference,
        )
    )


def _json_line(message: str) -> None:
    click.echo(orjson.dumps({"message": message}).decode())
