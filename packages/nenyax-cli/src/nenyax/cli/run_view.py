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

from nenyax.cli.episode_view import episode_view
from nenyax.cli.html_replay import inert_json, render_html
from nenyax.core.contract.trajectory import Status, Trajectory
from nenyax.core.engine.summary import Summary, tokens

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5rem;color:#1d2330;background:#fafbfc}
h1{font-size:1.3rem;margin:.2rem 0} .facts{color:#66707f;margin:.2rem 0 1rem}
.bar{display:flex;gap:.8rem;flex-wrap:wrap;align-items:center;margin:.5rem 0}
.bar input[type=number]{width:5rem} #q{width:18rem}
.split{display:grid;grid-template-columns:minmax(420px,1fr) 1.3fr;gap:1rem;align-items:start}
table{border-collapse:collapse;width:100%;background:#fff} th,td{padding:.25rem .5rem;border-bottom:1px solid #e3e7ee;
text-align:left;white-space:nowrap} th{cursor:pointer;user-select:none;background:#f0f2f6;position:sticky;top:0}
tbody tr{cursor:pointer} tbody tr:hover{background:#eef4ff} tr.open{background:#dbe8ff}
td.num{text-align:right;font-variant-numeric:tabular-nums} .ok{color:#2e7d32} .bad{color:#c62828}
iframe{width:100%;height:85vh;border:1px solid #d4d9e1;border-radius:8px;background:#fff}
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
    tr.append(cell(r.i + 1, "num"), cell(r.task), cell(r.sample, "num"), cell(r.status, r.ok ? "ok" : "bad"),
      cell(fmt(r.score), "num"), cell(r.tin, "num"), cell(r.tout, "num"), cell(fmt(r.secs), "num"));
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


def _row(index: int, traj: Trajectory) -> dict[str, object]:
    view = episode_view(traj)
    tokens_in, tokens_out = tokens(traj)
    replies = " ".join(turn.text for turn in view.turns if turn.text)[:400]
    # The player is searchable: a `check --save` run mixes the reference, the null policy and the probes.
    facts = (traj.policy.name, view.task_id, view.status.value, view.feedback, view.error or "", replies)
    text = " ".join(str(x) for x in facts)
    return {
        "i": index,
        "task": view.task_id or "",
        "sample": traj.sample,
        "status": view.status.value,
        "ok": view.status.trainable and view.judged,
        "score": view.score,
        "tin": tokens_in,
        "tout": tokens_out,
        "secs": view.seconds,
        "text": text.lower(),
    }


def render_run(trajectories: Iterable[Trajectory], *, title: str, summary: Summary | None = None) -> str:
    """The whole viewer document for these trajectories (in file order)."""
    rows, replays = [], []
    for index, traj in enumerate(trajectories):
        rows.append(_row(index, traj))
        replays.append(f'<script type="application/json" id="e{index}">{_inert(render_html(traj))}</script>')
    statuses = sorted({str(r["status"]) for r in rows} | {s.value for s in (Status.OK, Status.POLICY_ERROR)})
    options = "".join(f'<option value="{html.escape(str(s))}">{html.escape(str(s))}</option>' for s in statuses)
    facts = f"{len(rows)} episode(s)"
    if summary is not None and summary.mean is not None:
        ci = f" (95% CI {summary.ci95[0]:.3f} to {summary.ci95[1]:.3f})" if summary.ci95 else ""
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
            ("tin", "tokens in"),
            ("tout", "tokens out"),
            ("secs", "seconds"),
        )
    )
    return (
        "<!doctype html>\n<html lang=en><head><meta charset=utf-8>"
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        f"<title>nenyax view: {html.escape(title)}</title><style>{_CSS}</style></head><body>"
        f'<h1>nenyax view: {html.escape(title)}</h1><p class="facts">{html.escape(facts)}</p>'
        '<div class="bar"><label>status <select id="status"><option value="">all</option>'
        f"{options}</select></label>"
        '<label>score from <input id="min" type="number" step="any"></label>'
        '<label>to <input id="max" type="number" step="any"></label>'
        '<label>search <input id="q" type="search" placeholder="task, feedback, error, reply"></label>'
        '<span id="count" class="dim"></span>'
        '<span id="pager"><button id="prev">previous</button><span id="where"></span>'
        '<button id="next">next</button></span></div>'
        f'<div class="split"><table><thead><tr>{head}</tr></thead><tbody id="rows"></tbody></table>'
        '<iframe id="replay" sandbox="allow-same-origin" title="episode replay"></iframe></div>'
        f'<script type="application/json" id="nenyax-episodes">{_inert(rows)}</script>'
        f"{''.join(replays)}"
        f"<script>{_SCRIPT}</script></body></html>\n"
    )
