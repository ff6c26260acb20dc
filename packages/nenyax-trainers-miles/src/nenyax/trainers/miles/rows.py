"""An environment's tasks as miles' and slime's prompt data: JSONL rows of ``prompt`` (chat messages) and
``metadata`` (the episode: ``nenyax_uri``, ``nenyax_task``, ``nenyax_seed``), read with
``--prompt-data rows.jsonl --input-key prompt --metadata-key metadata``.

    python -m nenyax.trainers.miles "reasoning_gym:basic_arithmetic?size=200" --out rows.jsonl
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from nenyax.core import load, task_rows
from nenyax.core.errors import NenyaxError, UsageError
from nenyax.trainers.miles.episodes import SEED_KEY, TASK_KEY, URI_KEY


def prompt_rows(
    uri: str, *, split: str | None = None, limit: int | None = None, seed: int = 0
) -> Iterator[dict[str, Any]]:
    """One row per task of the environment at `uri`.

    A step environment's prompt is its task's first chat (what miles' session server renders first); a loop or
    a harness builds its chat while it plays, so its row's prompt is a line naming the task (`run_agent`
    plays the episode its metadata names, whatever the prompt)."""
    env = load(uri)
    for row in task_rows(env, split=split, limit=limit):
        task = row["task_id"]
        prompt = row["prompt"] or [{"role": "user", "content": f"Task {task} of {env.uri}."}]
        yield {"prompt": prompt, "metadata": {URI_KEY: env.uri, TASK_KEY: task, SEED_KEY: seed}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nenyax.trainers.miles", description=__doc__.split("\n\n")[0])
    parser.add_argument("uri", help="The environment, as `nenyax` names it.")
    parser.add_argument("--out", type=Path, help="The JSONL file to write (default: standard output).")
    parser.add_argument("--split", help="Only this split's tasks.")
    parser.add_argument("--limit", type=int, help="At most this many tasks.")
    parser.add_argument("--seed", type=int, default=0, help="The seed every episode starts from.")
    args = parser.parse_args(argv)
    try:
        rows = prompt_rows(args.uri, split=args.split, limit=args.limit, seed=args.seed)
        lines = [orjson.dumps(row) + b"\n" for row in rows]
        if not lines:
            raise UsageError(f"{args.uri} lists no task to write.")
        if args.out is None:
            sys.stdout.buffer.writelines(lines)
        else:
            args.out.write_bytes(b"".join(lines))
    except (NenyaxError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.out is not None:
        print(f"{len(lines)} rows written to {args.out}.", file=sys.stderr)
    return 0
