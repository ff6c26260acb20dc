"""The other side of the ``trainable/fresh-process`` check: replays episodes in a fresh interpreter.

Run as ``python -m nenyax.core.tiers.replay``; it reads one JSON request per line on stdin (the
environment's `EnvironmentSpec`: URI, load config and the plugins to rebuild the registry from; the
policy, the tasks and the seed; the judges and the scoring of ``check --judge``, built here too) and
answers one JSON line each with the manifest digest and fingerprints of the episode, so the checking
process can compare them with its own. It stays alive between requests: imports are paid once per check
run, not per URI.
"""

from __future__ import annotations

import sys
from typing import Any

import orjson

from nenyax.core.engine.judging import Judging
from nenyax.core.engine.loader import EnvironmentSpec
from nenyax.core.engine.sync import run_sync
from nenyax.core.tiers.views import fingerprint, first_view, preview, replay_view


def replay(request: dict[str, Any]) -> dict[str, Any]:
    """Rebuild the environment here from its source, play the episodes the request names, say what they looked like."""
    spec = EnvironmentSpec.from_data(request["source"])
    env = spec.load()
    try:
        judging = Judging.build(request.get("judges", ()), request.get("score"))  # installed judges, as here
        return run_sync(_play(env, request, judging))
    finally:
        env.close()


async def _play(env: Any, request: dict[str, Any], judging: Judging | None) -> dict[str, Any]:
    """The episodes, on one event loop (a judge's model connections live on it), then the judges closed."""
    try:
        episodes = {}
        for task in request["tasks"]:
            traj = await env.arollout(request["policy"], task=task, seed=request["seed"], judges=judging or ())
            episodes[task] = {
                "first": fingerprint(first_view(traj)),
                "replay": fingerprint(replay_view(traj)),
                "preview": preview(traj),
                "score": traj.score,
                "status": traj.status.value,
            }
        return {"digest": env.digest, "episodes": episodes}
    finally:
        if judging is not None:
            await judging.aclose()


def main() -> None:
    """Answer requests until stdin closes (argv[1]: the checking process's import path, as JSON)."""
    if len(sys.argv) > 1:
        sys.path.extend(p for p in orjson.loads(sys.argv[1]) if p not in sys.path)
    for line in sys.stdin.buffer:
        try:
            answer = replay(orjson.loads(line))
        except BaseException as exc:  # noqa: BLE001 - one request's failure, SystemExit included, is its answer
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.buffer.write(orjson.dumps(answer) + b"\n")
        sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
