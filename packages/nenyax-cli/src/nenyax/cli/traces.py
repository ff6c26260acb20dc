"""``--trace NAME`` (or ``NENYAX_TRACE``) on the commands that play episodes: core's GenAI spans to a tracer plugin."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from nenyax.core.plugins.registry import default_registry


def trace_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The ``--trace`` option: a tracer plugin's name (``nenyax plugins`` lists them)."""
    return click.option(
        "--trace",
        envvar="NENYAX_TRACE",
        default=None,
        metavar="NAME",
        help="Send OpenTelemetry GenAI spans to a tracer: otlp, langfuse, phoenix, mlflow or wandb.",
    )(fn)


class Traces:
    """The observers that trace one command's episodes to tracer `name` (none without one), and their flush.

    Built before any episode: an unknown name or a preset's missing key is refused here, in one sentence.
    Spans the backend did not take never change the run or its exit code: `close` counts them and says so
    in one line.
    """

    def __init__(self, name: str | None) -> None:
        self.tracer = default_registry().create("tracer", name) if name else None
        self.observers: list[Any] = []
        if self.tracer is not None:
            from nenyax.core.engine.tracing import GenAISpans  # OpenTelemetry's import only for a traced run

            self.observers.append(GenAISpans(self.tracer.tracer_provider))

    def close(self) -> None:
        """Flush and shut the tracer down (once); one warning line when spans were lost."""
        tracer, self.tracer = self.tracer, None
        if tracer is None:
            return
        note = tracer.shutdown().note
        if note:
            click.echo(f"Warning: {note}", err=True)

    def __enter__(self) -> list[Any]:
        return self.observers

    def __exit__(self, *exc: object) -> None:
        self.close()
