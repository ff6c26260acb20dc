"""A readable terminal replay of one trajectory (colours off when piped or with NO_COLOR).

What is shown comes from `nenyax.cli.episode_view`, the same view the HTML replay renders.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from nenyax.cli.episode_view import EpisodeView, episode_view
from nenyax.cli.safe import safe_text
from nenyax.core.contract.trajectory import Status, Trajectory

_STATUS_STYLE = {Status.OK: "green", Status.POLICY_ERROR: "yellow"}


def _text(value: str) -> Text:
    # Text objects, never markup strings: a model that writes "[bold]" must not restyle the replay,
    # and one that writes an escape sequence must not drive the terminal.
    return safe_text(value)


def header(view: EpisodeView) -> Table:
    """Who played what: environment, task, seed, policy."""
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    table.add_row("environment", _text(f"{view.env_uri} ({view.mode} mode)"))
    table.add_row("task", _text(f"{view.task_id}  ({view.seed_text})"))
    revision = f"  revision {view.revision[:16]}" if view.revision else ""
    table.add_row("policy", _text(view.policy + revision))
    return table


def turns(view: EpisodeView) -> list[Panel]:
    """One panel per turn: observation, what the model was shown, its reply (with token counts) and the action."""
    panels = []
    for turn in view.turns:
        rows: list[Any] = []
        if turn.observation is not None:
            rows += [Text("observation", style="bold cyan"), _text(turn.observation)]
        if turn.prompt is not None:
            rows += [Text("shown to the model", style="bold cyan"), _text(turn.prompt)]
        if turn.text is not None or turn.call is not None:
            label = "model" + (f"  ({turn.call.summary})" if turn.call else "")
            rows.append(Text(label, style="bold magenta"))
            rows += [_text(turn.text)] if turn.text is not None else []
        if turn.action is not None:
            rows += [Text("action", style="bold"), _text(turn.action)]
        for key, value in turn.info:
            rows += [Text(key, style="bold red" if key == "error" else "bold"), _text(value)]
        reward = f"  reward {turn.reward:g}" if turn.reward is not None else ""
        title = f"turn {turn.index}{reward}" + (f" {turn.ended}" if turn.ended else "")
        panels.append(Panel(Group(*rows), title=title, title_align="left"))
    return panels


def verdict(view: EpisodeView) -> Panel:
    """The judgment (or why there is none), status, time and token totals."""
    style = _STATUS_STYLE.get(view.status, "red")
    rows: list[Any] = []
    if view.judged:
        rows.append(Text(view.verdict("  "), style=f"bold {style}"))
        if view.feedback:
            rows.append(_text(view.feedback))
        if view.judge:
            rows.append(Text(f"judge {view.judge}", style="dim"))
    else:
        rows.append(Text(f"not judged: {view.no_score}, so there is no score", style="bold red"))
    if view.error:
        rows.append(Text("error: ", style="red") + _text(view.error))
    seconds = f"{view.seconds:.2f} s" if view.seconds is not None else "?"
    calls = f"{view.calls} model call(s), {view.completion_tokens} completion tokens"
    rows.append(Text(f"status {view.status.value}   {seconds}   {calls}"))
    return Panel(Group(*rows), title="judgment", title_align="left", border_style=style)


def render(traj: Trajectory, console: Console | None = None) -> None:
    """Print the whole replay."""
    console = console or Console()
    view = episode_view(traj)
    console.print(header(view))
    for panel in turns(view):
        console.print(panel)
    console.print(verdict(view))
