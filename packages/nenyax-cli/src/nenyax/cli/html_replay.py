"""One self-contained HTML file replaying a trajectory: no network fetch, no executable script.

Everything is rendered here in Python with `html.escape`, so model text always shows as text. The
trajectory rides along as inert JSON (``<script type="application/json">``, with ``<``, ``>``
and ``&`` escaped so it cannot close its tag), and a Content-Security-Policy forbids any fetch.
"""

from __future__ import annotations

import html
from typing import Any

import orjson

from nenyax.cli.replay import prompts_per_turn
from nenyax.core.contract import serde
from nenyax.core.contract.trajectory import Trajectory

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:960px;color:#1d2330;background:#fafbfc}
h1{font-size:1.3rem} dl{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem}
dt{font-weight:600} dd{margin:0} .turn,.verdict{border:1px solid #d4d9e1;border-radius:8px;
padding:.6rem 1rem;margin:1rem 0;background:#fff} .label{font-weight:600;margin-top:.5rem}
pre{white-space:pre-wrap;word-break:break-word;background:#f3f5f8;padding:.5rem;border-radius:6px;margin:.2rem 0}
.ok{border-color:#2e7d32} .bad{border-color:#c62828} .score{font-size:1.2rem;font-weight:700}
.dim{color:#66707f}
"""
_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def _e(value: Any) -> str:
    return html.escape(value if isinstance(value, str) else orjson.dumps(value).decode(), quote=True)


def _embedded_json(traj: Trajectory) -> str:
    raw = serde.dumps(traj).decode()
    for char, escaped in (
        ("&", "\\u0026"),
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        raw = raw.replace(char, escaped)
    return raw


def _turns(traj: Trajectory) -> str:
    calls = list(traj.model_calls)
    prompts = prompts_per_turn(traj)
    parts = []
    for index, step in enumerate(traj.steps, start=1):
        body = [f'<div class="label">observation</div><pre>{_e(step.observation)}</pre>']
        prompt = prompts[index - 1] if index - 1 < len(prompts) else None
        if prompt is not None and prompt != step.observation:
            body.append(f'<div class="label">shown to the model</div><pre>{_e(prompt)}</pre>')
        if step.text is not None:
            call = calls[index - 1] if index - 1 < len(calls) else None
            tokens = ""
            if call is not None and call.completion_token_ids is not None:
                tokens = f' <span class="dim">({len(call.completion_token_ids)} tokens, {call.latency_s:.2f} s)</span>'
            body.append(f'<div class="label">model{tokens}</div><pre class="model-text">{_e(step.text)}</pre>')
        if step.text is None or step.action != step.text:
            body.append(f'<div class="label">action</div><pre>{_e(step.action)}</pre>')
        for key, value in step.info.items():
            body.append(f'<div class="label">{_e(key)}</div><pre>{_e(value)}</pre>')
        parts.append(f'<section class="turn"><h2>turn {index} · reward {step.reward:g}</h2>{"".join(body)}</section>')
    return "\n".join(parts)


def _verdict(traj: Trajectory) -> str:
    if traj.judgment is None:
        inner = '<div class="score">not judged</div><p>No score: the episode failed outside the policy.</p>'
        ok = False
    else:
        j = traj.judgment
        passed = "" if j.passed is None else (" · passed" if j.passed else " · not passed")
        inner = f'<div class="score" id="score">score {j.score:g}{passed}</div>'
        if j.feedback:
            inner += f"<p>{_e(j.feedback)}</p>"
        if j.judge:
            inner += f'<p class="dim">judge {_e(j.judge)}</p>'
        ok = traj.status.trainable
    if traj.error:
        inner += f"<pre>{_e(traj.error)}</pre>"
    return f'<section class="verdict {"ok" if ok else "bad"}"><h2>judgment · {traj.status.value}</h2>{inner}</section>'


def render_html(traj: Trajectory) -> str:
    """The complete HTML document."""
    policy = traj.policy.name or traj.policy.kind
    seconds = f"{traj.timing.seconds:.2f} s" if traj.timing else "?"
    rows = [
        ("environment", f"{traj.env_uri} ({traj.mode.value} mode)"),
        ("task", f"{traj.task_id} (seed {traj.seed})"),
        ("policy", f"{traj.policy.kind}: {policy}" + (f" @ {traj.policy.revision}" if traj.policy.revision else "")),
        ("duration", f"{seconds}, {len(traj.model_calls)} model call(s)"),
    ]
    facts = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in rows)
    return (
        "<!doctype html>\n<html lang=en><head><meta charset=utf-8>"
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        f"<title>nenyax replay: {_e(traj.env_uri)}</title><style>{_CSS}</style></head><body>"
        f"<h1>nenyax replay</h1><dl>{facts}</dl>{_turns(traj)}{_verdict(traj)}"
        f'<script type="application/json" id="nenyax-trajectory">{_embedded_json(traj)}</script>'
        "</body></html>\n"
    )
