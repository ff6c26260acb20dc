"""A readable terminal replay of one trajectory (colours off when piped or with NO_COLOR)."""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from nenyax.core.contract.trajectory import ModelCall, Status, Trajectory

_STATUS_STYLE = {Status.OK: "green", Status.POLICY_ERROR: "yellow"}


def _text(value: Any) -> Text:
    # Text objects, never markup strings: a model that writes "[bold]" must not restyle the replay.
    return Text(value if isinstance(value, str) else repr(value))


def _count(ids: tuple[int, ...] | None, reported: int | None) -> str:
    if ids is not None:
        return str(len(ids))
    return "?" if reported is None else str(reported)


def _tokens(call: ModelCall) -> str:
    prompt = _count(call.prompt_token_ids, call.usage.get("prompt_tokens"))
    completion = _count(call.completion_token_ids, call.usage.get("completion_tokens"))
    return f"{prompt} prompt / {completion} completion tokens"


def header(traj: Trajectory) -> Table:
    """Who played what: environment, task, seed, policy."""
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    table.add_row("environment", _text(f"{traj.env_uri} ({traj.mode.value} mode)"))
    table.add_row("task", _text(f"{traj.task_id}  (seed {traj.seed})"))
    policy = traj.policy
    who = policy.name or policy.kind
    if policy.revision:
        who += f"  revision {policy.revision[:16]}"
    table.add_row("policy", _text(f"{policy.kind}: {who}"))
    return table


def prompts_per_turn(traj: Trajectory) -> list[str]:
    """The user message(s) a text policy saw before each of its replies, joined per turn."""
    prompts, pending = [], []
    for message in traj.messages:
        if message.get("role") == "user":
            pending.append(str(message.get("content", "")))
        elif message.get("role") == "assistant":
            prompts.append("\n".join(pending))
            pending = []
    return prompts


def turns(traj: Trajectory) -> list[Panel]:
    """One panel per step: observation, the model's reply (with its token counts) and the action."""
    calls = list(traj.model_calls)
    prompts = prompts_per_turn(traj)
    panels = []
    for index, step in enumerate(traj.steps, start=1):
        rows: list[Any] = [Text("observation", style="bold cyan"), _text(step.observation)]
        prompt = prompts[index - 1] if index - 1 < len(prompts) else None
        if prompt is not None and prompt != step.observation:
            rows += [Text("shown to the model", style="bold cyan"), _text(prompt)]
        if step.text is not None:
            call = calls[index - 1] if index - 1 < len(calls) else None
            label = "model" + (f"  ({_tokens(call)}, {call.latency_s:.2f} s)" if call else "")
            rows += [Text(label, style="bold magenta"), _text(step.text)]
        if step.text is None or step.action != step.text:
            rows += [Text("action", style="bold"), _text(step.action)]
        for key, value in step.info.items():
            style = "bold red" if key == "error" else "bold"
            rows += [Text(key, style=style), _text(value)]
        flags = " terminated" if step.terminated else " truncated" if step.truncated else ""
        title = f"turn {index}  reward {step.reward:g}{flags}"
        panels.append(Panel(Group(*rows), title=title, title_align="left"))
    return panels


def verdict(traj: Trajectory) -> Panel:
    """The judgment (or why there is none), status, time and token totals."""
    style = _STATUS_STYLE.get(traj.status, "red")
    rows: list[Any] = []
    if traj.judgment is not None:
        j = traj.judgment
        passed = "" if j.passed is None else ("  passed" if j.passed else "  not passed")
        rows.append(Text(f"score {j.score:g}{passed}", style=f"bold {style}"))
        if j.feedback:
            rows.append(_text(j.feedback))
        if j.judge:
            rows.append(Text(f"judge {j.judge}", style="dim"))
    else:
        rows.append(Text("not judged (infrastructure, environment or verifier failure: no score)", style="bold red"))
    if traj.error:
        rows.append(Text("error: ", style="red") + _text(traj.error))
    seconds = f"{traj.timing.seconds:.2f} s" if traj.timing else "?"
    completion = sum(len(c.completion_token_ids or ()) or c.usage.get("completion_tokens", 0) for c in traj.model_calls)
    calls = f"{len(traj.model_calls)} model call(s), {completion} completion tokens"
    rows.append(Text(f"status {traj.status.value}   {seconds}   {calls}"))
    return Panel(Group(*rows), title="judgment", title_align="left", border_style=style)


def render(traj: Trajectory, console: Console | None = None) -> None:
    """Print the whole replay."""
    console = console or Console()
    console.print(header(traj))
    for panel in turns(traj):
        console.print(panel)
    console.print(verdict(traj))
