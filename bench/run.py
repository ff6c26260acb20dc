"""Every benchmark of issue 25's table (P1-P9) in one run, and the table in bench/README.md rewritten from it.

`nox -s bench` runs this in an environment holding every distribution; `python bench/run.py` does the same
in any environment that has them. Each benchmark runs as its own process (one at a time, so none loads the
box for another) and reports its figures through `_report.figure`; a benchmark that fails or reports
nothing leaves its rows marked as such, never an old figure. `--only P2,P7` runs some (the table is then
not written); `--no-write` prints the table only.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
README = HERE / "README.md"
MARK = "bench"


# (group, script and arguments, rows: (figure id, what, goal in words, anchor), see: the README section on it)
BENCHMARKS: list[tuple[str, list[str], list[tuple[str, str, str, str]], str]] = [
    (
        "P1",
        ["gymnasium_cartpole.py", "--episodes", "200", "--repeats", "5"],
        [("P1", "step overhead, 200 CartPole-v1 episodes streamed to JSONL", "<= 1.10", "the raw gymnasium loop")],
        "#gymnasium_cartpole-where-the-time-goes",
    ),
    (
        "P1e",
        ["episode_cost.py", "--episodes", "2000", "--repeats", "5"],
        [
            ("P1e.cartpole", "per-episode cost, CartPole-v1", "<= 1.3", "the raw gymnasium loop"),
            ("P1e.arithmetic", "per-episode cost, one-step reasoning-gym task", "<= 1.3", "generator + scorer"),
        ],
        "#episode_cost-what-one-rollout-costs",
    ),
    (
        "P2",
        ["concurrency.py", "--episodes", "4096", "--concurrency", "4096", "--repeats", "3"],
        [
            ("P2.wall", "4,096 concurrent episodes, wall / floor", "<= 1.25", "max(latency, bare CPU x calls)"),
            ("P2.cpu", "4,096 concurrent episodes, CPU per call", "<= 1.3", "a bare aiohttp client"),
        ],
        "#concurrency-notes",
    ),
    (
        "P3",
        ["serve_openenv.py", "--sessions", "64", "--seconds", "5", "--repeats", "3", "--grid", "2048"],
        [
            ("P3.cpu", "`nenyax serve`, server CPU per step", "<= 1.25", "a bare aiohttp WebSocket server"),
            ("P3.steps", "`nenyax serve`, steps/s", "reported", "OpenEnv 0.10's own server"),
            ("P3.sessions", "`nenyax serve`, 2,048 sessions held at once", ">= 99 %", "all of them"),
        ],
        "#serve_openenv-figures-and-notes",
    ),
    *(
        (
            "P4",
            ["export_parquet.py", "--trajectories", "100000", "--shape", shape, "--repeats", "3", "--skip-export"],
            [(f"P4.{shape}", f"Parquet export, {what} rows", ">= 100,000 rows/s", "from_pylist + write_table")],
            "#export_parquet-p4-notes",
        )
        for shape, what in (("raw", "raw"), ("sft", "SFT"))
    ),
    (
        "P5",
        ["startup.py", "--runs", "20"],
        [("P5", "`nenyax --help` start-up", "<= 1.25", '`python -c "import click"`')],
        "#startup-p5-where-the-time-goes",
    ),
    (
        "P6",
        ["learner_update.py", "--prompts", "4", "--group", "2", "--max-tokens", "32", "--steps", "3"],
        [("P6", "grpo update, completion tokens/s", ">= 1.0", "TRL's GRPOTrainer step")],
        "#learner_update-notes",
    ),
    (
        "P7",
        ["proxy_overhead.py", "--calls", "2000"],
        [
            ("P7.plain.p50", "recording proxy, added latency p50", "<= 0.25 ms", "the server called directly"),
            ("P7.plain.p99", "recording proxy, added latency p99", "<= 1 ms", "the server called directly"),
            ("P7.streamed.p50", "recording proxy, streamed, added p50", "<= 0.25 ms", "the server called directly"),
            ("P7.streamed.p99", "recording proxy, streamed, added p99", "<= 1 ms", "the server called directly"),
        ],
        "#proxy_overhead-p7-where-the-time-goes",
    ),
    (
        "P8",
        ["eval_throughput.py", "--tasks", "10000", "--repeats", "3"],
        [("P8", "`nenyax eval` episodes/s", "<= 1.3", "generator + scorer in a loop")],
        "#eval_throughput-where-the-time-goes",
    ),
    (
        "P9",
        ["image_observations.py", "--steps", "200"],
        [("P9", "bytes recorded per Atari-sized step", "<= 1.05x raw", "the raw observation bytes")],
        "#image_observations-p9-where-the-bytes-go",
    ),
    (
        "P10",
        ["trl_rollout.py", "--prompts", "4", "--group", "4", "--max-tokens", "48", "--steps", "3"],
        [("P10", "TRL `rollout_func` through Nenyax, cost per completion token", "<= 1.10", "TRL generating alone")],
        "#trl_rollout-p10-notes",
    ),
]


def _value(row: dict) -> str:
    value, unit = row["value"], row["unit"]
    if unit == "rows/s":
        return f"{value:,.0f} rows/s"
    if unit == "%":
        return f"{value:.1f} %"
    if unit == "ms":
        return f"{value:+.3f} ms"
    return f"{value:.2f}x"


def _run(script: list[str], report: Path, timeout: float) -> tuple[str, float]:
    """Run one benchmark; return what went wrong (empty when it ran) and its wall time."""
    started = time.perf_counter()
    # cellpylib (a reasoning-gym dependency) warns about its own syntax on every import: not this run's news.
    env = {**os.environ, "NENYAX_BENCH_REPORT": str(report), "PYTHONWARNINGS": "ignore::SyntaxWarning"}
    try:
        done = subprocess.run(
            [sys.executable, str(HERE / script[0]), *script[1:]], env=env, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return f"ran past {timeout:.0f} s", time.perf_counter() - started
    took = time.perf_counter() - started
    return ("" if done.returncode == 0 else f"exited {done.returncode}"), took


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.1f}/{five:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated groups (P1,P2,...); the table is not written")
    parser.add_argument("--no-write", action="store_true", help="print the table, leave bench/README.md alone")
    parser.add_argument("--timeout", type=float, default=900, help="seconds one benchmark may run")
    args = parser.parse_args()
    only = {g.strip() for g in args.only.split(",") if g.strip()}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False)
    began, load_before = time.perf_counter(), _load()
    rows: dict[str, dict] = {}
    failures: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as folder:
        for group, script, wanted, _see in BENCHMARKS:
            if only and group not in only:
                continue
            report = Path(folder) / f"{script[0]}.{len(failures)}.{len(rows)}.jsonl"
            print(f"\n=== {group}: python bench/{' '.join(script)}  (load {_load()})", flush=True)
            wrong, took = _run(script, report, args.timeout)
            got = [json.loads(line) for line in report.read_text().splitlines()] if report.exists() else []
            rows.update({r["id"]: r for r in got})
            print(f"=== {group}: {took:.0f} s{', ' + wrong if wrong else ''}", flush=True)
            for figure_id, *_ in wanted:
                if figure_id not in rows:
                    failures[figure_id] = wrong or "it reported no figure"
    lines = [
        "| figure | what | goal | measured | met | anchor | detail | rerun |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    met_count = total = 0
    for group, script, wanted, see in BENCHMARKS:
        if only and group not in only:
            continue
        command = f"`python bench/{' '.join(script)}`"
        for figure_id, what, goal, anchor in wanted:
            row = rows.get(figure_id)
            if row is None:
                missing = f"not measured: {failures[figure_id]}"
                lines.append(f"| {figure_id} | {what} | {goal} | {missing} | no | {anchor} | | {command} |")
                total += 1
                continue
            met = {True: "yes", False: f"**no** ([why]({see}))", None: "n/a"}[row["met"]]
            if row["met"] is not None:
                total += 1
                met_count += bool(row["met"])
            detail = row["detail"].replace("|", "/")
            lines.append(
                f"| {figure_id} | {what} | {goal} | **{_value(row)}** | {met} | {anchor} | {detail} | {command} |"
            )
    minutes = (time.perf_counter() - began) / 60
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    summary = (
        f"{met_count} of {total} goals met. Measured by `nox -s bench` in one run of {minutes:.0f} min, {stamp}, "
        f"commit {commit.stdout.strip() or 'unknown'}, {os.cpu_count()} cores, load average {load_before} before "
        f"and {_load()} after (1/5 min).\n"
    )
    table = "\n".join(lines) + "\n\n" + summary
    print("\n" + table)
    if only or args.no_write:
        return
    from nenyax_testsupport.tables import sync_marked_block

    if sync_marked_block(README, MARK, table, update=True) is None:
        raise SystemExit(f"{README} lost its <!-- {MARK}:start --> / <!-- {MARK}:end --> markers.")
    print(f"Wrote the table into {README}.")


if __name__ == "__main__":
    main()
