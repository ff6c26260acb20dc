"""One self-contained HTML file replaying a trajectory: no network fetch, no executable script.

What is shown comes from `nenyax.cli.episode_view`, the same view the terminal replay renders.
Everything is rendered here in Python with `html.escape`, so model text always shows as text. The
trajectory rides along as inert JSON (``<script type="application/json">``, with ``<``, ``>``
and ``&`` escaped so it cannot close its tag), and a Content-Security-Policy forbids any fetch.
"""

from __future__ import annotations

import html

from nenyax.cli.episode_view import EpisodeView, episode_view
from nenyax.core.contract import serde
from nenyax.core.contract.trajectory import Trajectory

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;padding:0 1rem;max-width:960px;color:#1d2330;
background:#fafbfc} h1{font-size:1.3rem} h2{font-size:1.05rem;margin:.2rem 0 .5rem}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem}
dt{font-weight:600} dd{margin:0;min-width:0;overflow-wrap:anywhere}
.turn,.verdict{border:1px solid #d4d9e1;border-radius:8px;padding:.6rem 1rem;margin:1rem 0;background:#fff}
.label{font-weight:600;margin-top:.5rem}
pre{white-space:pre-wrap;word-break:break-word;background:#f3f5f8;padding:.5rem;border-radius:6px;margin:.2rem 0}
.pass{border-color:#2e7d32;background:#f1f8f1} .fail,.error{border-color:#c62828;background:#fdf2f2}
.partial{border-color:#b26a00;background:#fff8ec} .score{font-size:1.2rem;font-weight:700}
.pass .score{color:#2e7d32} .fail .score,.error .score{color:#c62828} .partial .score{color:#b26a00}
.dim{color:#66707f} .status{font-weight:700} .env-info{color:#4a5361}
#verdicts{list-style:none;padding:0} #verdicts li{border-left:4px solid #d4d9e1;padding:.2rem .6rem;margin:.4rem 0}
#verdicts p{margin:.2rem 0} #verdicts small{color:#66707f}
"""
_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def _e(value: str) -> str:
    return html.escape(value, quote=True)


def inert_json(raw: str) -> str:
    """JSON text that cannot close its ``<script>`` tag (``<``, ``>``, ``&`` and line separators escaped)."""
    for char, escaped in (
        ("&", "\\u0026"),
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        raw = raw.replace(char, escaped)
    return raw


def _embedded_json(traj: Trajectory) -> str:
    return inert_json(serde.dumps(traj).decode())


def _block(label: str, text: str, css: str = "") -> str:
    return f'<div class="label">{label}</div><pre{css}>{_e(text)}</pre>'


def _system(view: EpisodeView) -> str:
    if view.system is None:
        return ""
    return f'<section class="turn" id="system"><h2>system prompt</h2><pre>{_e(view.system)}</pre></section>'


def _turns(view: EpisodeView) -> str:
    parts = []
    for turn in view.turns:
        body = []
        if turn.observation is not None:
            body.append(_block("observation", turn.observation))
        if turn.prompt is not None:
            body.append(_block("shown to the model", turn.prompt))
        if turn.text is not None or turn.call is not None:
            tokens = f' <span class="dim">({_e(turn.call.summary)})</span>' if turn.call else ""
            if turn.text is None:  # a reply that only calls tools: its calls are the action below
                body.append(f'<div class="label">model{tokens}</div>')
            else:
                body.append(_block(f"model{tokens}", turn.text, ' class="model-text"'))
        if turn.action is not None:
            body.append(_block("action", turn.action))
        env_info = [f"{key}={value}" for key, value in turn.info if key != "error"]
        if env_info:  # the environment's, not the model's: a transition probability must not read as a logprob
            body.append(_block("env info", "\n".join(env_info), ' class="env-info"'))
        body.extend(_block("error", value) for key, value in turn.info if key == "error")
        title = f"turn {turn.index}"
        title += f" · reward {turn.reward:g}" if turn.reward is not None else ""
        title += f" · {turn.ended}" if turn.ended else ""
        parts.append(f'<section class="turn"><h2>{title}</h2>{"".join(body)}</section>')
    if view.final is not None:
        final = _block("observation", view.final)
        parts.append(f'<section class="turn" id="final"><h2>the episode ended on</h2>{final}</section>')
    return "\n".join(parts)


def _verdict(view: EpisodeView) -> str:
    # The judgment alone: the episode's status has a box of its own, so "ok" never reads as "passed".
    if view.judged:
        inner = f'<div class="score" id="score">{view.verdict(" · ")}</div>'
        if view.feedback and not view.verdicts:  # composed from the verdicts, each shown below
            inner += f"<p>{_e(view.feedback)}</p>"
    else:
        inner = f'<div class="score">not judged</div><p>No score: {_e(view.no_score or "")}.</p>'
    rows = [
        ("extracted answer", view.answer_shown),
        ("target", view.target),
        ("judge", None if view.verdicts else view.judge or None),
    ]
    facts = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in rows if v is not None)
    inner += f"<dl>{facts}</dl>" if facts else ""
    if view.verdicts:  # the judges put on it, each apart: the score above is composed from these
        items = "".join(
            f'<li class="{v.tone}"><b>{_e(v.label)}</b> {_e(v.said)}'
            + (f"<p>{_e(v.feedback)}</p>" if v.feedback else "")
            + f"<small>{_e(v.judge)}{f' · {v.calls} judge model call(s)' if v.calls else ''}</small></li>"
            for v in view.verdicts
        )
        inner += f'<h3>verdicts</h3><ul id="verdicts">{items}</ul>'
    return f'<section class="verdict {view.tone}" id="verdict"><h2>judgment</h2>{inner}</section>'


def _status(view: EpisodeView) -> str:
    inner = f'<p><span class="status">{_e(view.status.value)}</span>: {_e(view.status_meaning)}</p>'
    if view.error:
        inner += f"<pre>{_e(view.error)}</pre>"
    return f'<section class="turn" id="status"><h2>episode status</h2>{inner}</section>'


def render_html(traj: Trajectory) -> str:
    """The complete HTML document."""
    view = episode_view(traj)
    seconds = view.duration
    rows = [
        ("environment", f"{view.env_uri} ({view.mode} mode)"),
        ("task", f"{view.task_id} ({view.seed_text})"),
        ("policy", view.policy + (f" @ {view.revision}" if view.revision else "")),
        *((("model", view.model),) if view.model else ()),
        *((("sampling", view.sampling),) if view.sampling else ()),
        ("duration", f"{seconds}, {view.calls} model call(s), {view.completion_tokens} completion tokens"),
    ]
    facts = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in rows)
    return (
        "<!doctype html>\n<html lang=en><head><meta charset=utf-8>"
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        f"<title>nenyax replay: {_e(view.env_uri)}</title><style>{_CSS}</style></head><body>"
        f"<h1>nenyax replay</h1><dl>{facts}</dl>{_system(view)}{_turns(view)}{_verdict(view)}{_status(view)}"
        f'<script type="application/json" id="nenyax-trajectory">{_embedded_json(traj)}</script>'
        "</body></html>\n"
    )
