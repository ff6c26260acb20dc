"""One self-contained HTML file listing every episode of a run: sortable, filterable, each opening its replay.

The table is built from `episode_view` (the view both replays render), and an episode opens the
very document `nenyax try --html` writes (`render_html`), in an ``<iframe srcdoc>`` sandboxed so that it
may run no script. Each replay rides along as an inert JSON string, parsed only when it is opened,
so a run of 10,000 episodes loads without building 10,000 documents. The page's one script is
allowed by its hash in the Content-Security-Policy; nothing may be fetched.
"""

from __future__ import annotations

import base64
import hashlib
import html
from collections.abc import Iterable

import orjson

from nenyax.cli.episode_view import EpisodeView, episode_view
from nenyax.cli.html_replay import inert_json, render_html
from nenyax.core.contract.trajectory import Status, Trajectory
from nenyax.core.engine.summary import Summary, tokens

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5rem;color:#1d2330;background:#fafbfc}
h1{font-size:1.3rem;margin:.2rem 0;overflow-wrap:anywhere} .facts{color:#66707f;margin:.2rem 0}
.facts b{color:#1d2330;font-weight:600} .facts:last-of-type{margin-bottom:1rem}
.bar{display:flex;gap:.8rem;flex-wrap:wrap;align-items:center;margin:.5rem 0}
.bar input[type=number]{width:5rem} #q{width:18rem}
.split{display:grid;grid-template-columns:minmax(0,1fr) minmax(330px,31%);gap:1rem;align-items:start}
.rows{min-width:0;overflow-x:auto}
table{border-collapse:collapse;width:100%;background:#fff;font-size:13px}
th,td{padding:.25rem;border-bottom:1px solid #e3e7ee;
text-align:left;white-space:nowrap} th{cursor:pointer;user-select:none;background:#f0f2f6;position:sticky;top:0;
white-space:normal;vertical-align:bottom}
td.clip{max-width:8rem;overflow:hidden;text-overflow:ellipsis} td.qa{max-width:5.5rem}
td.q{max-width:0;min-width:5.5rem;width:100%}
tbody tr{cursor:pointer} tbody tr:hover{background:#eef4ff} tr.open{background:#dbe8ff}
td.num{text-align:right;font-variant-numeric:tabular-nums} .ok{color:#2e7d32} .bad{color:#c62828}
iframe{width:100%;height:calc(100vh - 2rem);border:1px solid #d4d9e1;border-radius:8px;background:#fff;
position:sticky;top:1rem}
#pager button{margin:0 .2rem} .dim{color:#66707f}
"""

# The page's behaviour: filter, sort, page through the rows, open one episode's replay. Kept as plain
# DOM code (no framework) so the file stays self-contained and the CSP can name it by hash.
_SCRIPT = """
"use strict";
const rows = JSON.parse(document.getElementById("nenyax-episodes").textContent);
const PAGE = 500;
const $ = (id) => document.getElementById(id);
let shown = rows, sortKey = "i", sortDir = 1, page = 0;
function cell(text, cls) {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls) td.className = cls;
  if (cls && cls.startsWith("clip")) td.title = text;
  return td;
}
function fmt(v) { return v === null ? "-" : String(Math.round(v * 1000) / 1000); }
function apply() {
  const status = $("status").value, q = $("q").value.trim().toLowerCase();
  const lo = $("min").value === "" ? -Infinity : Number($("min").value);
  const hi = $("max").value === "" ? Infinity : Number($("max").value);
  shown = rows.filter((r) => (status === "" || r.status === status)
    && (r.score === null ? ($("min").value === "" && $("max").value === "") : (r.score >= lo && r.score <= hi))
    && (q === "" || r.text.includes(q)));
  shown.sort((a, b) => {
    const x = a[sortKey], y = b[sortKey];
    if (x === y) return a.i - b.i;
    if (x === null) return 1;
    if (y === null) return -1;
    return (x < y ? -1 : 1) * sortDir;
  });
  page = Math.min(page, Math.max(0, Math.ceil(shown.length / PAGE) - 1));
  draw();
}
function draw() {
  const body = $("rows");
  body.replaceChildren();
  for (const r of shown.slice(page * PAGE, (page + 1) * PAGE)) {
    const tr = document.createElement("tr");
    tr.dataset.i = r.i;
    const task = cell(r.tail, "clip");
    task.title = r.task;
    tr.append(cell(r.i + 1, "num"), task, cell(r.sample, "num"), cell(r.status, r.ok ? "ok" : "bad"),
      cell(fmt(r.score), "num"), cell(r.question, "clip qa q"), cell(r.target, "clip qa"), cell(r.answer, "clip qa"),
      cell(r.tin, "num"), cell(r.tout, "num"), cell(fmt(r.secs), "num"));
    if (String(r.i) === location.hash.slice(1)) tr.className = "open";
    body.append(tr);
  }
  const pages = Math.max(1, Math.ceil(shown.length / PAGE));
  $("count").textContent = shown.length + " of " + rows.length + " episodes";
  $("where").textContent = "page " + (page + 1) + " of " + pages;
  $("prev").disabled = page === 0;
  $("next").disabled = page >= pages - 1;
}
function openEpisode(i) {
  const replay = JSON.parse(document.getElementById("e" + i).textContent);
  $("replay").srcdoc = replay;
  $("replay").dataset.i = i;
  for (const tr of document.querySelectorAll("tr.open")) tr.className = "";
  const tr = document.querySelector('tr[data-i="' + i + '"]');
  if (tr) tr.className = "open";
  if (location.hash !== "#" + i) history.replaceState(null, "", "#" + i);
}
for (const id of ["status", "q", "min", "max"]) $(id).addEventListener("input", () => { page = 0; apply(); });
for (const th of document.querySelectorAll("th[data-key]")) {
  th.addEventListener("click", () => {
    const key = th.dataset.key;
    sortDir = key === sortKey ? -sortDir : 1;
    sortKey = key;
    apply();
  });
}
$("rows").addEventListener("click", (e) => { const tr = e.target.closest("tr"); if (tr) openEpisode(tr.dataset.i); });
$("prev").addEventListener("click", () => { page -= 1; draw(); });
$("next").addEventListener("click", () => { page += 1; draw(); });
apply();
const first = location.hash.slice(1);
if (first !== "" && document.getElementById("e" + first)) openEpisode(first);
"""
_SCRIPT_HASH = base64.b64encode(hashlib.sha256(_SCRIPT.encode()).digest()).decode()
_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    f"script-src 'sha256-{_SCRIPT_HASH}'; frame-src 'self'"
)


def _inert(value: object) -> str:
    """JSON that cannot close its ``<script>`` tag."""
    return inert_json(orjson.dumps(value).decode())


# A table cell's text at most; the replay holds the whole of it.
CELL_CHARS = 80
_PLACEHOLDER = (
    '<!doctype html><html lang=en><body style="font:14px/1.4 system-ui,sans-serif;color:#66707f;margin:2rem">'
    "<p>Choose an episode in the table to replay it here.</p></body></html>"
)


def _clip(text: str | None) -> str:
    """`text` on one line, cut to `CELL_CHARS` with an ellipsis ("" for None)."""
    line = " ".join((text or "").split())
    return line if len(line) <= CELL_CHARS else line[: CELL_CHARS - 1] + "\u2026"


def _tail(task_id: str, keep: int = 15) -> str:
    """A long task id by its end (``…arithmetic/42/0``): the end tells tasks apart."""
    return task_id if len(task_id) <= keep + 1 else "\u2026" + task_id[-keep:]


def _row(index: int, traj: Trajectory, view: EpisodeView) -> dict[str, object]:
    tokens_in, tokens_out = tokens(traj)
    replies = " ".join(turn.text for turn in view.turns if turn.text)[:400]
    question, target, answer = _clip(view.question), _clip(view.target), _clip(view.answer)
    # The player is searchable: a `check --save` run mixes the reference, the null policy and the probes.
    facts = [traj.policy.name, view.task_id or "", view.status.value, view.feedback, view.error or "", replies]
    facts += [question, target, answer]
    text = " ".join(str(x) for x in facts)
    return {
        "i": index,
        "task": view.task_id or "",
        "tail": _tail(view.task_id or ""),
        "sample": traj.sample,
        "status": view.status.value,
        "ok": view.status is Status.OK,  # green says the episode ran, never that it passed
        "score": view.score,
        "question": question,
        "target": target,
        "answer": answer,
        "tin": tokens_in,
        "tout": tokens_out,
        "secs": view.own_seconds,  # the episode's own time: what its calls waited behind others is left out
        "text": text.lower(),
    }


def _policy(traj: Trajectory) -> str:
    policy = traj.policy
    return policy.kind if policy.name in ("", policy.kind) else f"{policy.name} ({policy.kind})"


def _distinct(values: Iterable[str | None]) -> str:
    """The distinct values in order, ``none`` for no value; past three, how many more."""
    seen = list(dict.fromkeys(v or "none" for v in values)) or ["none"]
    more = f" (+{len(seen) - 3} more)" if len(seen) > 3 else ""
    return "; ".join(seen[:3]) + more


def _who(trajectories: list[Trajectory], views: list[EpisodeView]) -> str:
    """The header's second line: which policy and model played, with which sampling settings."""
    parts = (
        ("policy", _distinct(_policy(t) for t in trajectories)),
        ("model", _distinct(v.model for v in views)),
        ("sampling", _distinct(v.sampling for v in views)),
    )
    return " · ".join(f"<b>{key}</b> {html.escape(value)}" for key, value in parts)


def render_run(trajectories: Iterable[Trajectory], *, title: str, summary: Summary | None = None) -> str:
    """The whole viewer document for these trajectories (in file order)."""
    episodes = list(trajectories)
    views = [episode_view(traj) for traj in episodes]
    rows, replays = [], []
    for index, (traj, view) in enumerate(zip(episodes, views, strict=True)):
        rows.append(_row(index, traj, view))
        replays.append(f'<script type="application/json" id="e{index}">{_inert(render_html(traj))}</script>')
    statuses = sorted({str(r["status"]) for r in rows} | {s.value for s in (Status.OK, Status.POLICY_ERROR)})
    options = "".join(f'<option value="{html.escape(str(s))}">{html.escape(str(s))}</option>' for s in statuses)
    facts = f"{len(rows)} episode(s)"
    if summary is not None and summary.mean is not None:
        method = f" {summary.ci_method}" if summary.ci_method else ""
        ci = f" (95% CI{method} {summary.ci95[0]:.3f} to {summary.ci95[1]:.3f})" if summary.ci95 else ""
        at_k = ", ".join(f"pass@{k} {v:.3f}" for k, v in summary.pass_at_k.items())
        facts += f" · mean score {summary.mean:.3f}{ci} · {at_k}"
    head = "".join(
        f'<th data-key="{key}">{label}</th>'
        for key, label in (
            ("i", "#"),
            ("task", "task"),
            ("sample", "sample"),
            ("status", "status"),
            ("score", "score"),
            ("question", "question"),
            ("target", "target"),
            ("answer", "extracted answer"),
            ("tin", "tokens in"),
            ("tout", "tokens out"),
            ("secs", "own s"),
        )
    )
    return (
        "<!doctype html>\n<html lang=en><head><meta charset=utf-8>"
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        f"<title>nenyax view: {html.escape(title)}</title><style>{_CSS}</style></head><body>"
        f'<h1>nenyax view: {html.escape(title)}</h1><p class="facts">{html.escape(facts)}</p>'
        f'<p class="facts">{_who(episodes, views)}</p>'
        '<div class="bar"><label>status <select id="status"><option value="">all</option>'
        f"{options}</select></label>"
        '<label>score from <input id="min" type="number" step="any"></label>'
        '<label>to <input id="max" type="number" step="any"></label>'
        '<label>search <input id="q" type="search" placeholder="task, feedback, error, reply"></label>'
        '<span id="count" class="dim"></span>'
        '<span id="pager"><button id="prev">previous</button><span id="where"></span>'
        '<button id="next">next</button></span></div>'
        f'<div class="split"><div class="rows"><table><thead><tr>{head}</tr></thead><tbody id="rows"></tbody>'
        f'</table></div><iframe id="replay" sandbox="allow-same-origin" title="episode replay" '
        f'srcdoc="{html.escape(_PLACEHOLDER, quote=True)}"></iframe></div>'
        f'<script type="application/json" id="nenyax-episodes">{_inert(rows)}</script>'
        f"{''.join(replays)}"
        f"<script>{_SCRIPT}</script></body></html>\n"
    )
