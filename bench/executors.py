"""The ``process`` backend: episodes/s with 2 worker processes against 1, the in-process pool as the anchor.

One-step reasoning-gym episodes (``basic_arithmetic``), CPU-bound, with two policies:

* ``solve``: a module-level function that works the answer out from the question (exact fractions,
  redone `--work` times: it stands for a policy's own compute, about 1 ms an episode by default);
* ``reference``: the built-in oracle (tens of microseconds an episode: the parent's share, receiving
  and writing each trajectory, is then a large part of the work).

Each policy is played three ways in the same run: in this process (``asyncio``, the anchor), then on
1 and on 2 worker processes. Episodes/s is the steady state: from the first fifth of the trajectories
back to the last (by then every worker is playing). The wall time with the workers' start (a fresh
interpreter each, imports and the env's load included) and the CPU each side spends per episode are
printed beside it. The trajectories of the three ways are compared (task, sample, seed,
status, judgment): they must be the same. Run from the repository root with nenyax-core and
nenyax-adapters-reasoning-gym installed:

    python bench/executors.py [--episodes 6000] [--reference-episodes 30000] [--work 40] [--repeats 3] [--ray]

With ``--ray`` (nenyax-ray installed) each policy is also played on a local Ray instance with 1 and 2
workers, the same trajectories required.
"""

from __future__ import annotations

import argparse
import ast
import operator
import os
import resource
import statistics
import tempfile
import time
from fractions import Fraction
from pathlib import Path

from nenyax.core import as_policy, load
from nenyax.core.engine.runner import Job, run_jobs
from nenyax.core.engine.sync import run_sync

WORK = int(os.environ.get("BENCH_WORK", "40"))
"""How many times `solve` works each answer out (the workers read it from the environment too)."""

_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


class Stamps:
    """When each episode ended, as the run's observers see it."""

    def __init__(self, stamps: list[float]) -> None:
        self.stamps = stamps

    def on_episode_ended(self, _event: object) -> None:
        self.stamps.append(time.perf_counter())


def _value(node: ast.AST) -> Fraction:
    if isinstance(node, ast.BinOp):
        return _OPS[type(node.op)](_value(node.left), _value(node.right))  # type: ignore[no-any-return]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_value(node.operand)
    if isinstance(node, ast.Constant):
        return Fraction(node.value)
    raise ValueError(ast.dump(node))


def solve(observation: str) -> str:
    """Work out ``Calculate <expression>.`` exactly, `WORK` times over (a CPU-bound policy)."""
    expression = observation.removeprefix("Calculate ").rstrip(".").strip()
    for _ in range(WORK):
        value = _value(ast.parse(expression, mode="eval").body)
    text = str(value.numerator) if value.denominator == 1 else str(float(value))
    return f"<answer>{text}</answer>"


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def play(env, policy, jobs, backend, workers, sink):
    """Play `jobs`; return (steady episodes/s, wall seconds, the trajectories' facts, CPU s of this process
    and of the workers)."""
    stamps = []
    mine, theirs = _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    out = run_sync(
        run_jobs(
            env,
            as_policy(policy),
            jobs,
            sink=sink,
            backend=backend,
            workers=workers,
            observers=[Stamps(stamps)],
        )
    )
    wall = time.perf_counter() - started
    cpu = (_cpu(resource.RUSAGE_SELF) - mine, _cpu(resource.RUSAGE_CHILDREN) - theirs)  # workers are joined
    # Steady state: from the fifth of the trajectories on, so that workers which started late (a fresh
    # interpreter's start varies by seconds on a busy box) are all playing.
    first = len(stamps) // 5
    steady = (len(stamps) - 1 - first) / (stamps[-1] - stamps[first]) if len(stamps) > first + 1 else 0.0
    facts = [(t.task_id, t.sample, t.seed, t.status, t.judgment) for t in out]
    return steady, wall, facts, cpu


def _per_episode(cpus, started, episodes):
    """Median CPU microseconds per episode: (this process, the workers less their start-up)."""
    parent = statistics.median(c[0] for c in cpus) / episodes * 1e6
    children = max(0.0, statistics.median(c[1] for c in cpus) - started) / episodes * 1e6
    return parent, children


def measure(name, policy, episodes, repeats, ray=False):
    env = load(f"reasoning_gym:basic_arithmetic?size={episodes}&seed=42")
    jobs = [Job(task, None, 0) for task in env.task_ids()]
    ways = {"asyncio": ("asyncio", None), "process x1": ("process", 1), "process x2": ("process", 2)}
    if ray:  # a local Ray instance started (and shut down) by each play: its start is in the wall time only
        ways |= {"ray x1": ("ray", 1), "ray x2": ("ray", 2)}
    rates: dict[str, list[float]] = {way: [] for way in ways}
    walls: dict[str, list[float]] = {way: [] for way in ways}
    cpus: dict[str, list[tuple[float, float]]] = {way: [] for way in ways}
    facts = {}
    with tempfile.TemporaryDirectory() as tmp:
        # A worker's start-up (a fresh interpreter, its imports, the env's load), measured on its own, so
        # the CPU per episode below is the episodes' alone.
        startup = play(env, policy, jobs[:1], "process", 1, Path(tmp) / "startup.jsonl")[3][1]
        for repeat in range(repeats):
            for way, (backend, workers) in ways.items():
                sink = Path(tmp) / f"{way}-{repeat}.jsonl"
                rate, wall, played, cpu = play(env, policy, jobs, backend, workers, sink)
                cpus[way].append(cpu)
                rates[way].append(rate)
                walls[way].append(wall)
                facts.setdefault(way, played)
                assert played == facts[way], f"{way} played other trajectories on repeat {repeat}"
    same = all(facts[way] == facts["asyncio"] for way in ways)
    ok = sum(1 for f in facts["asyncio"] if f[4] is not None and f[4].score == 1.0)
    print(f"{name}: {episodes} episodes, {ok} scored 1.0; same trajectories in all {len(ways)} ways: {same}")
    print(f"  a worker's start-up: {startup:.2f} CPU s (taken out of the workers' CPU per episode below)")
    for way in ways:
        rate, wall = statistics.median(rates[way]), statistics.median(walls[way])
        parent, children = _per_episode(cpus[way], startup * (ways[way][1] or 0), episodes)
        if ways[way][0] == "ray":  # Ray's workers are the raylet's children, not ours: their CPU is not seen
            print(
                f"  {way:<11} {rate:9.0f} episodes/s (steady)   wall {wall:6.2f} s   CPU per episode: "
                f"this process {parent:6.0f} us   (median of {repeats})"
            )
            continue
        print(
            f"  {way:<11} {rate:9.0f} episodes/s (steady)   wall {wall:6.2f} s   CPU per episode: "
            f"this process {parent:6.0f} us, workers {children:6.0f} us   (median of {repeats})"
        )
    # What the CPU per episode implies on 2 idle cores: one worker is bound by its own core; two share
    # both cores with this process (which receives and writes every trajectory).
    per = {way: _per_episode(cpus[way], startup * (ways[way][1] or 0), episodes) for way in ways}
    implied_one = 1e6 / per["process x1"][1]
    implied_two = min(2e6 / (per["process x2"][0] + per["process x2"][1]), 2e6 / per["process x2"][1])
    print(f"  on 2 idle cores, that CPU per episode implies 2 workers / 1 worker: {implied_two / implied_one:.2f}x")
    one, two = statistics.median(rates["process x1"]), statistics.median(rates["process x2"])
    anchor = statistics.median(rates["asyncio"])
    print(
        f"  2 workers / 1 worker: {two / one:.2f}x (goal >= 1.7)   "
        f"1 worker / asyncio: {one / anchor:.2f}x   2 workers / asyncio: {two / anchor:.2f}x"
    )
    if ray:
        ray_one, ray_two = statistics.median(rates["ray x1"]), statistics.median(rates["ray x2"])
        print(
            f"  ray: 2 workers / 1 worker {ray_two / ray_one:.2f}x   2 ray workers / 2 processes {ray_two / two:.2f}x"
        )
    if not same:
        raise SystemExit("the backends played different trajectories")


def main() -> None:
    global WORK
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=6000, help="Episodes of the `solve` policy per way.")
    parser.add_argument("--reference-episodes", type=int, default=30000, help="Episodes of `reference` per way.")
    parser.add_argument("--work", type=int, default=WORK, help="Times `solve` works each answer out.")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--ray", action="store_true", help="Also play on backend='ray' (needs nenyax-ray).")
    args = parser.parse_args()
    os.environ["BENCH_WORK"] = str(args.work)  # the workers are fresh interpreters: they read it there
    WORK = args.work
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the start")
    measure(f"solve (module-level callable, work {args.work})", solve, args.episodes, args.repeats, args.ray)
    measure("reference", "reference", args.reference_episodes, args.repeats, args.ray)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
