"""Progress for long work: a bar for checks and many-episode runs, a spinner while a model loads.

Shown on stderr, and only when a person is watching: stdout and stderr both terminals and no
``--quiet``. Piped or redirected, nothing is drawn, so logs and JSON stay clean.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from nenyax.cli.safe import neutral


def watching(quiet: bool) -> bool:
    """Whether to draw progress: someone at a terminal, and not ``--quiet``."""
    return not quiet and sys.stdout.isatty() and sys.stderr.isatty()


def _console() -> Console:
    return Console(stderr=True)


@contextlib.contextmanager
def bar(description: str, total: int, quiet: bool) -> Iterator[Callable[..., None]]:
    """A progress bar over `total` items; yields ``advance(n=1, note="")`` (a no-op when not watching)."""
    if not watching(quiet) or total <= 0:
        yield lambda n=1, note="": None
        return
    columns: list[Any] = [
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[note]}", markup=False),
    ]
    with Progress(*columns, console=_console(), transient=True) as progress:
        task = progress.add_task(neutral(description), total=total, note="")

        def advance(n: int = 1, note: str = "") -> None:
            progress.update(task, advance=n, note=neutral(note))

        yield advance


def prepare_model(endpoint: Any, quiet: bool) -> None:
    """Load the endpoint's model before the first episode, with a spinner, and say how long it took.

    The first call's latency is then the call's own. Remote providers have nothing to load: no output.
    """
    if getattr(endpoint.provider, "prepare", None) is None:  # a remote server: nothing to load, no spinner
        return
    name = f"{endpoint.provider_name}:{endpoint.model}"
    if not watching(quiet):
        endpoint.prepare()
        return
    console = _console()
    with console.status(f"Loading the model {neutral(name)} ...", spinner="dots"):
        seconds = endpoint.prepare()
    if seconds is not None:
        console.print(f"Model {neutral(name)} loaded in {seconds:.1f} s.", markup=False, highlight=False)
