"""``nenyax view RUN``: a run directory (or a trajectories.jsonl) as one self-contained HTML page."""

from __future__ import annotations

import contextlib
import http.server
from pathlib import Path

import click
import orjson

from nenyax.cli.run_view import render_run
from nenyax.core import UsageError
from nenyax.core.engine.rundirs import RUN_TOML, TRAJECTORIES, read_summary
from nenyax.core.engine.sinks import read_trajectories


def _source(path: Path) -> tuple[Path, Path | None]:
    """The JSONL to read and the run directory it belongs to (None for a bare JSONL file)."""
    if path.is_dir():
        jsonl = path / TRAJECTORIES
        if not jsonl.exists():
            msg = f"{path} holds no {TRAJECTORIES}; name a run directory `nenyax eval` wrote, or a JSONL file."
            raise UsageError(msg)
        return jsonl, path
    if not path.exists():
        msg = f"{path} does not exist; name a run directory or a trajectories.jsonl file."
        raise UsageError(msg)
    run = path.parent if (path.parent / RUN_TOML).exists() else None
    return path, run


@click.command("view")
@click.argument("run", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Where to write the page.")
@click.option("--serve", is_flag=True, help="Also serve the page on 127.0.0.1 until interrupted.")
@click.option("--port", type=click.IntRange(0, 65535), default=0, help="Port for --serve (default: any free one).")
@click.option("--json", "as_json", is_flag=True, help="Print where the page went as JSON.")
def view_command(run: Path, out: Path | None, serve: bool, port: int, as_json: bool) -> None:
    """Write one HTML page listing every episode of RUN (sortable, filterable), each opening its replay."""
    jsonl, run_dir = _source(run)
    trajectories = list(read_trajectories(jsonl))
    if not trajectories:
        msg = f"{jsonl} holds no episode; view a run once `nenyax eval` or `nenyax try --save` has recorded one."
        raise UsageError(msg)
    summary = read_summary(run_dir) if run_dir is not None else None
    page = render_run(trajectories, title=str(run_dir or jsonl), summary=summary)
    target = out or ((run_dir / "view.html") if run_dir is not None else jsonl.with_suffix(".html"))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(page, encoding="utf-8")
    if as_json:
        click.echo(orjson.dumps({"page": str(target), "bytes": target.stat().st_size}).decode())
    else:
        click.echo(f"Run viewer written to {target} ({target.stat().st_size / 1e6:.1f} MB)")
    if serve:
        _serve(target, port)


def _serve(page: Path, port: int) -> None:
    body = page.read_bytes()

    class PageOnly(http.server.BaseHTTPRequestHandler):
        # The page and nothing else: the run directory beside it is not published, even on loopback.
        def do_GET(self) -> None:
            if self.path.split("?")[0] not in ("/", f"/{page.name}"):
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return  # quiet: the page is one request

    with http.server.ThreadingHTTPServer(("127.0.0.1", port), PageOnly) as server:
        url = f"http://127.0.0.1:{server.server_address[1]}/{page.name}"
        click.echo(f"Serving {url} (Ctrl-C stops)", err=True)
        with contextlib.suppress(KeyboardInterrupt):
            server.serve_forever()
