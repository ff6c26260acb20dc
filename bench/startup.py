"""P5: `nenyax --help` start-up against `python -c "import click"` (the floor any click CLI pays).

Each side is a fresh interpreter, run `--runs` times interleaved so load on the box moves both alike;
medians are compared. The installed `nenyax` script is what a user types, so it is what is timed.
Run: `python bench/startup.py [--runs 20]`.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _report import figure


def _timed(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    script = shutil.which("nenyax", path=str(Path(sys.executable).parent)) or shutil.which("nenyax")
    if script is None:
        raise SystemExit("No `nenyax` script is installed beside this interpreter: install nenyax-cli first.")
    anchor_cmd, ours_cmd = [sys.executable, "-c", "import click"], [script, "--help"]
    _timed(anchor_cmd), _timed(ours_cmd)  # page both in first
    anchor, ours = [], []
    for _ in range(args.runs):
        anchor.append(_timed(anchor_cmd))
        ours.append(_timed(ours_cmd))
    a, o = statistics.median(anchor) * 1000, statistics.median(ours) * 1000
    print(f"python -c 'import click': {a:.1f} ms   nenyax --help: {o:.1f} ms   ratio {o / a:.2f} (goal <= 1.25)")
    figure("P5", o / a, goal=1.25, detail=f"{o:.0f} vs {a:.0f} ms, median of {args.runs} fresh processes each")


if __name__ == "__main__":
    main()
