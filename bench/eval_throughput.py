"""`nenyax eval` throughput: the real CLI on reasoning-gym, against the dataset's generator and scorer in a loop.

Runs, side by side in the same run:

* the anchor: ``reasoning_gym.create_dataset("basic_arithmetic", seed=42, size=N)``, then for every
  index the entry and ``score_answer`` on its gold answer, in one process (what any eval harness
  must do at the least);
* ``nenyax eval reasoning_gym:basic_arithmetic?size=N&seed=42 --policy reference --tasks N`` as a
  subprocess, writing a run directory (every trajectory to JSONL, summary.json).

Prints episodes/s for both, two ratios (the eval loop alone, from summary.json's wall time; and the
whole command, process start, imports and writing included) against the goal of 1.3, and the run
directory's size per episode. Run from the repository root with nenyax-core, nenyax-cli and
nenyax-adapters-reasoning-gym installed:

    python bench/eval_throughput.py [--tasks 10000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import reasoning_gym
from _report import figure


def anchor(n: int) -> float:
    data = reasoning_gym.create_dataset("basic_arithmetic", seed=42, size=n)
    started = time.perf_counter()
    for index in range(n):
        entry = data[index]
        assert data.score_answer(entry["answer"], entry) == 1.0
    return time.perf_counter() - started


def nenyax_eval(n: int, out: Path) -> tuple[float, float, int]:
    """(whole command seconds, eval loop seconds from summary.json, run directory bytes)."""
    uri = f"reasoning_gym:basic_arithmetic?size={n}&seed=42"
    command = [sys.executable, "-m", "nenyax.cli", "eval", uri, "--policy", "reference", "--tasks", str(n)]
    started = time.perf_counter()
    subprocess.run([*command, "--out", str(out), "--json"], check=True, capture_output=True)
    whole = time.perf_counter() - started
    summary = json.loads((out / "summary.json").read_text())
    assert summary["episodes"] == n
    assert summary["mean"] == 1.0
    size = sum(p.stat().st_size for p in out.iterdir())
    return whole, summary["wall_s"], size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    n = args.tasks
    raw, whole, loop, sizes = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for repeat in range(args.repeats):  # interleaved, so a busy moment hurts both sides alike
            raw.append(anchor(n))
            w, lo, size = nenyax_eval(n, Path(tmp) / f"run{repeat}")
            whole.append(w)
            loop.append(lo)
            sizes.append(size)
    r, w, lo = statistics.median(raw), statistics.median(whole), statistics.median(loop)
    print(f"{n} episodes, median of {args.repeats}")
    print(f"generator + scorer loop : {r:.3f} s  {n / r:,.0f} episodes/s")
    print(f"nenyax eval, eval loop  : {lo:.3f} s  {n / lo:,.0f} episodes/s   ratio {lo / r:.2f} (goal <= 1.3)")
    print(f"nenyax eval, whole cmd  : {w:.3f} s  {n / w:,.0f} episodes/s   ratio {w / r:.2f}")
    print(f"run directory           : {statistics.median(sizes) / n:,.0f} bytes per episode")
    said = (
        f"eval loop {n / lo:,.0f} vs {n / r:,.0f} episodes/s ({n:,} tasks, median of {args.repeats}); "
        f"whole command {w / r:.2f}x"
    )
    figure("P8", lo / r, goal=1.3, detail=said)


if __name__ == "__main__":
    main()
