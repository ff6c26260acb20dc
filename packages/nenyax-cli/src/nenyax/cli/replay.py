"""A readable terminal replay of one trajectory (colours off when piped or with NO_COLOR).

What is shown comes from `nenyax.cli.episode_view`, the same view the HTML replay renders. On a
terminal each turn is a panel; piped or redirected, the same sections are printed as plain lines
that are never hard-wrapped, so a log keeps each text whole for grep and diff.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from nenyax.cli.episode_view import EpisodeView, TurnView, episode_view
from nenyax.cli.safe import safe_text
from nenyax.core.contract.trajectory import Trajectory

_TONE_STYLE = {"pass": "green", "fail": "red", "partial": "yellow", "error": "red"}


def _text(value: str) -> Text:
    # Text objects, never markup strings: a model that writes "[bold]" must not restyle the replay,
    # and one that writes an escape sequence must not drive the terminal.
    return safe_text(value)


def _facts(view: EpisodeView) -> list[tuple[str, str]]:
    revision = f"  revision {view.revision[:16]}" if view.revision else ""
    return [
        ("environment", f"{view.env_uri} ({view.mode} mode)"),
        ("task", f"{view.task_id}  ({view.seed_text})"),
        ("policy", view.policy + revision),
        *((("model", view.model),) if view.model else ()),
        *((("sampling", view.sampling),) if view.sampling else ()),
    ]


def header(view: EpisodeView) -> Table:
    """Who played what: environment, task, seed, policy."""
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    for key, value in _facts(view):
        table.add_row(key, _text(value))
    return table


def _turn_rows(turn: TurnView) -> list[Text]:
    rows: list[Text] = []
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
        if key == "error":
            rows += [Text("error", style="bold red"), _text(value)]
        else:  # the environment's, not the model's: a transition probability must not read as a logprob
            rows.append(Text("env info: ", style="bold") + _text(f"{key}={value}"))
    return rows


def _turn_title(turn: TurnView) -> str:
    reward = f"  reward {turn.reward:g}" if turn.reward is not None else ""
    return f"turn {turn.index}{reward}" + (f" {turn.ended}" if turn.ended else "")


def turns(view: EpisodeView) -> list[Panel]:
    """One panel per turn: observation, what the model was shown, its reply (with token counts) and the action."""
    panels = [Panel(Group(*_turn_rows(turn)), title=_turn_title(turn), title_align="left") for turn in view.turns]
    if view.final is not None:
        panels.append(Panel(_text(view.final), title="the episode ended on", title_align="left"))
    return panels


def _verdict_rows(view: EpisodeView) -> list[Text]:
    style = _TONE_STYLE[view.tone]
    rows: list[Text] = []
    if view.judged:
        rows.append(Text(view.verdict("  "), style=f"bold {style}"))
        if view.feedback and not view.verdicts:  # composed from the verdicts, each shown below
            rows.append(_text(view.feedback))
    else:
        rows.append(Text(f"not judged: {view.no_score}, so there is no score", style="bold red"))
    for label, value in (("extracted answer", view.answer_shown), ("target", view.target)):
        if value is not None:
            rows.append(Text(f"{label}  ", style="bold") + _text(value))
    if view.judge and not view.verdicts:
        rows.append(Text(f"judge {view.judge}", style="dim"))
    if view.verdicts:  # the judges put on it, each apart: the score above is composed from these
        width = max(len(v.label) for v in view.verdicts)
        for one in view.verdicts:
            rows.append(Text(f"{one.label:<{width}}  ", style="bold") + Text(one.said, style=_TONE_STYLE[one.tone]))
            detail = " ".join(one.feedback.split())
            calls = f"{one.calls} judge model call(s)" if one.calls else ""
            for line in filter(None, (detail[:300], f"{one.judge}  {calls}".strip())):
                rows.append(Text(" " * (width + 2)) + _text(line))
    return rows


def _status_rows(view: EpisodeView) -> list[Text]:
    # Apart from the verdict, and labelled: "ok" says the episode ran to its end, not that it passed.
    seconds = view.duration
    calls = f"{view.calls} model call(s), {view.completion_tokens} completion tokens"
    rows = [
        Text("status ", style="bold") + Text(f"{view.status.value}: {view.status_meaning}"),
        Text("time ", style="bold") + Text(f"{seconds}   {calls}"),
    ]
    if view.error:
        rows.append(Text("error: ", style="red") + _text(view.error))
    return rows


def verdict(view: EpisodeView) -> Panel:
    """The judgment (or why there is none), coloured by the judgment itself."""
    border = _TONE_STYLE[view.tone]
    return Panel(Group(*_verdict_rows(view)), title="judgment", title_align="left", border_style=border)


def status(view: EpisodeView) -> Panel:
    """How the episode ended (its status, time, tokens and error), in a panel of its own."""
    return Panel(Group(*_status_rows(view)), title="episode", title_align="left", border_style="dim")


def _print_plain(console: Console, view: EpisodeView) -> None:
    def line(value: Any) -> None:
        console.print(value, soft_wrap=True, crop=False, overflow="ignore")

    for key, value in _facts(view):
        line(Text(f"{key:<12} ", style="bold") + _text(value))
    sections: list[tuple[str, list[Text], str]] = []
    if view.system is not None:
        sections.append(("system prompt", [_text(view.system)], "bold"))
    sections += [(_turn_title(turn), _turn_rows(turn), "bold") for turn in view.turns]
    if view.final is not None:
        sections.append(("the episode ended on", [_text(view.final)], "bold"))
    sections.append(("judgment", _verdict_rows(view), f"bold {_TONE_STYLE[view.tone]}"))
    sections.append(("episode", _status_rows(view), "bold"))
    for title, rows, style in sections:
        line(Text(f"── {title}", style=style))
        for row in rows:
            line(row)


def render(traj: Trajectory, console: Console | None = None) -> None:
    """Print the whole replay: panels on a terminal, plain unwrapped lines when piped."""
    console = console or Console()
    view = episode_view(traj)
    if not console.is_terminal:
        _print_plain(console, view)
        return
    console.print(header(view))
    if view.system is not None:
        console.print(Panel(_text(view.system), title="system prompt", title_align="left", border_style="dim"))
    for panel in turns(view):
        console.print(panel)
    console.print(verdict(view))
    console.print(status(view))
