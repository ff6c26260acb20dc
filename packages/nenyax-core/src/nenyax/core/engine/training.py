"""The train loop behind ``nenyax train``: rounds a learner keeps only when held-out improves.

A run directory (the layout `eval` writes) holds everything::

    run.toml            the settings (environment, learner and its options, model, round sizes)
    trajectories.jsonl  every training episode, appended as it ends (what `view` and `export` read)
    heldout.jsonl       every held-out episode
    metrics.jsonl       one line per finished round (round 0: the learner before any update)
    checkpoints/        round-0000 and every kept round: what `learner.save` wrote
    plot.png            held-out score per round, kept and reverted rounds marked

Round 0 measures the learner as it starts and saves it. Each later round samples training tasks, plays a
group of episodes per task with ``learner.policy()``, updates on the trainable members, and measures the
held-out tasks with ``learner.eval_policy()`` (``policy()`` when it has none). A round whose held-out
score beats the best so far is kept (saved); any other is reverted (``restore`` of the best revision).
The held-out score is the mean judged score of the episodes the policy is answerable for (``ok`` and
``policy_error``); an infrastructure failure is left out of it and counted, never scored as 0.

``resume=True`` continues a killed run from its last finished round: the learner is restored to the
best revision and the next round starts (a round cut short is played again; the episodes it had
recorded move to ``trajectories.interrupted.jsonl`` and ``heldout.interrupted.jsonl``).
"""

from __future__ import annotations

import json
import os
import random
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs

from nenyax.core.contract.trajectory import Group, Trajectory
from nenyax.core.engine import learning
from nenyax.core.engine.environment import Environment
from nenyax.core.engine.judging import Judging
from nenyax.core.engine.settings import TrainSettings
from nenyax.core.errors import InfraFailure, UsageError

METRICS = "metrics.jsonl"
HELDOUT = "heldout.jsonl"
TRAJECTORIES = "trajectories.jsonl"
CHECKPOINTS = "checkpoints"
PLOT = "plot.png"
HELDOUT_SPLITS = ("heldout", "validation", "test", "eval")
"""A split by one of these names (after the first split) is the held-out set; otherwise one is drawn."""


@attrs.frozen(kw_only=True)
class RoundResult:
    """One line of ``metrics.jsonl``."""

    round: int
    heldout_score: float
    """Mean held-out score after this round's update (round 0: before any)."""
    best_before: float | None
    """The best held-out score before this round (None for round 0)."""
    kept: bool
    revision: str
    """The revision the learner is in after the round: this round's when kept, the best one otherwise."""
    heldout_statuses: dict[str, int]
    train_score: float | None = None
    """Mean score of the round's training episodes (before the update)."""
    trained_on: int = 0
    """Trajectories handed to `update`."""
    train_statuses: dict[str, int] = attrs.field(factory=dict)
    update: dict[str, float] = attrs.field(factory=dict)
    """What `learner.update` returned (loss, ...)."""
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """The round as a JSON object."""
        return attrs.asdict(self)


def split_tasks(env: Environment, heldout: int, seed: int) -> tuple[list[str], list[str]]:
    """(training pool, held-out tasks): a held-out split when the environment has one, else a seeded draw."""
    splits = [s.name for s in env.manifest.splits]
    named = next((s for s in splits[1:] if s in HELDOUT_SPLITS), None)
    if named is not None:
        pool, held = env.task_ids(splits[0]), env.task_ids(named, limit=heldout)
    else:
        tasks = env.task_ids()
        random.Random(f"heldout:{seed}").shuffle(tasks)
        held, pool = tasks[:heldout], tasks[heldout:]
    if len(held) < heldout or not pool:
        msg = (
            f"{env.uri} lists {len(held) + len(pool)} task(s); training needs the {heldout} held-out ones plus "
            "at least one to train on (lower --heldout, or load more tasks)."
        )
        raise UsageError(msg)
    return pool, held


def measure(trajectories: Sequence[Trajectory]) -> tuple[float, dict[str, int]]:
    """Mean judged score over the episodes the policy answers for, and every status's count.

    Raise `InfraFailure` when none could be scored: there is nothing to keep or revert on.
    """
    statuses = dict(Counter(t.status.value for t in trajectories))
    scored = [t.score or 0.0 for t in trajectories if t.status.trainable]
    if not scored:
        msg = f"No held-out episode could be scored ({', '.join(f'{k}: {v}' for k, v in statuses.items())})."
        raise InfraFailure(msg)
    return sum(scored) / len(scored), statuses


def _mean_score(groups: Iterable[Group]) -> float | None:
    scores = [t.score or 0.0 for g in groups for t in g.trajectories if t.status.trainable]
    return sum(scores) / len(scores) if scores else None


def read_rounds(path: Path) -> list[RoundResult]:
    """The finished rounds of a run directory (a line cut off by a kill is left out)."""
    file = path / METRICS
    if not file.is_file():
        return []
    rounds = []
    for line in file.read_text(encoding="utf-8").splitlines():
        try:
            rounds.append(RoundResult(**json.loads(line)))
        except (ValueError, TypeError):
            break  # a line the killed run did not finish writing
    return rounds


class Trainer:
    """Runs the rounds of one run directory (`train` is the one-call form)."""

    def __init__(
        self,
        env: Environment,
        learner: Any,
        path: str | Path,
        settings: TrainSettings,
        *,
        observers: Iterable[Any] = (),
        on_round: Callable[[RoundResult], None] | None = None,
    ) -> None:
        self.env, self.learner, self.path, self.settings = env, learner, Path(path), settings
        self.observers = list(observers)
        self.on_round = on_round
        self.pool, self.heldout = split_tasks(env, settings.heldout, settings.seed)
        self.rounds: list[RoundResult] = []
        self.judging = Judging.build(settings.judges, settings.score)
        """The judges put on the environment, built once for every round (None: its own verifier alone)."""

    @property
    def best(self) -> RoundResult:
        """The last kept round (round 0 counts as kept)."""
        return next(r for r in reversed(self.rounds) if r.kept)

    def _eval_policy(self) -> Any:
        make = getattr(self.learner, "eval_policy", None)
        return make() if callable(make) else self.learner.policy()

    def _heldout(self) -> tuple[float, dict[str, int]]:
        played = self.env.rollouts(
            self._eval_policy(),
            self.heldout,
            concurrency=self.settings.concurrency,
            sink=self.path / HELDOUT,
            timeout=self.settings.timeout,
            observers=self.observers,
            judges=self.judging or (),
        )
        return measure(played)

    def _save(self, number: int) -> str:
        directory = self.path / CHECKPOINTS / f"round-{number:04d}"
        directory.mkdir(parents=True, exist_ok=True)
        return str(self.learner.save(directory))

    def _finish(self, result: RoundResult) -> None:
        with (self.path / METRICS).open("a", encoding="utf-8") as file:
            file.write(json.dumps(result.to_json()) + "\n")
        self.rounds.append(result)
        write_plot(self.path / PLOT, self.rounds)
        if self.on_round is not None:
            self.on_round(result)

    def resume(self) -> int:
        """Continue after the last finished round of this directory (the learner restored to the best one).

        The round that was under way when the run stopped is played again from its start, so the episodes
        it had recorded are set aside, not lost: moved to ``<name>.interrupted.jsonl`` beside each file,
        which then holds every finished round's episodes exactly once. Returns how many were set aside.
        """
        self.rounds = read_rounds(self.path)
        if self.rounds:
            self.learner.restore(self.best.revision)
        played = sum(sum(r.train_statuses.values()) for r in self.rounds)
        measured = sum(sum(r.heldout_statuses.values()) for r in self.rounds)
        return set_aside(self.path / TRAJECTORIES, keep=played) + set_aside(self.path / HELDOUT, keep=measured)

    def baseline(self) -> RoundResult:
        """Round 0: the learner measured and saved before any update."""
        started = time.perf_counter()
        score, statuses = self._heldout()
        result = RoundResult(
            round=0,
            heldout_score=score,
            best_before=None,
            kept=True,
            revision=self._save(0),
            heldout_statuses=statuses,
            seconds=time.perf_counter() - started,
        )
        self._finish(result)
        return result

    def play_round(self, number: int) -> RoundResult:
        """Sample tasks, play a group each, update, measure held-out; keep or revert."""
        started = time.perf_counter()
        best = self.best
        rng = random.Random(f"round:{self.settings.seed}:{number}")
        tasks = rng.sample(self.pool, min(self.settings.tasks_per_round, len(self.pool)))
        groups = self.env.groups(
            self.learner.policy(),
            tasks,
            n=self.settings.group_size,
            concurrency=self.settings.concurrency,
            sink=self.path / TRAJECTORIES,
            timeout=self.settings.timeout,
            observers=self.observers,
            judges=self.judging or (),
        )
        trainable = learning.trainable_groups(groups)
        metrics = learning.update(self.learner, groups)
        score, statuses = self._heldout()
        kept = score > best.heldout_score
        if kept:
            revision = self._save(number)
        else:
            self.learner.restore(best.revision)
            revision = best.revision
        result = RoundResult(
            round=number,
            heldout_score=score,
            best_before=best.heldout_score,
            kept=kept,
            revision=revision,
            heldout_statuses=statuses,
            train_score=_mean_score(groups),
            trained_on=sum(len(g.trajectories) for g in trainable),
            train_statuses=dict(Counter(t.status.value for g in groups for t in g.trajectories)),
            update={k: float(v) for k, v in dict(metrics).items()},
            seconds=time.perf_counter() - started,
        )
        self._finish(result)
        return result

    def run(self) -> list[RoundResult]:
        """Play round 0 (unless resumed past it) and every round up to `settings.rounds`."""
        if not self.rounds:
            self.baseline()
        for number in range(self.rounds[-1].round + 1, self.settings.rounds + 1):
            self.play_round(number)
        return self.rounds


def set_aside(path: Path, *, keep: int) -> int:
    """Keep the first `keep` complete lines of the JSONL file `path`; append the other complete lines to
    ``<stem>.interrupted.jsonl`` (synced before `path` is rewritten) and return how many; a line a killed
    writer cut off was never a record and is dropped."""
    if not path.exists():
        return 0
    lines = path.read_bytes().splitlines(keepends=True)
    complete = [line for line in lines if line.endswith(b"\n")]
    head, rest = complete[:keep], complete[keep:]
    if rest:
        with path.with_name(f"{path.stem}.interrupted.jsonl").open("ab") as aside:
            aside.write(b"".join(rest))
            aside.flush()
            os.fsync(aside.fileno())
    if len(head) != len(lines):
        draft = path.with_name(f"{path.name}.draft")
        draft.write_bytes(b"".join(head))
        os.replace(draft, path)
    return len(rest)


def train(
    env: Environment,
    learner: Any,
    path: str | Path,
    settings: TrainSettings | None = None,
    *,
    resume: bool = False,
    observers: Iterable[Any] = (),
    on_round: Callable[[RoundResult], None] | None = None,
) -> list[RoundResult]:
    """Train `learner` on `env` into the run directory `path` (it must exist); return every round."""
    trainer = Trainer(env, learner, path, settings or TrainSettings(), observers=observers, on_round=on_round)
    if resume:
        trainer.resume()
    return trainer.run()


def write_plot(path: Path, rounds: Sequence[RoundResult]) -> bool:
    """Draw held-out score per round, kept rounds filled and reverted ones hollow; False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display: a file only
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    figure, axes = plt.subplots(figsize=(6, 3.5), dpi=100)
    xs = [r.round for r in rounds]
    axes.plot(xs, [r.heldout_score for r in rounds], color="#888888", linewidth=1, zorder=1)
    best: list[float] = []
    for r in rounds:
        best.append(r.heldout_score if r.kept else best[-1])
    axes.step(xs, best, where="post", color="#2a7", linewidth=1.5, label="best kept", zorder=2)
    kept = [r for r in rounds if r.kept]
    reverted = [r for r in rounds if not r.kept]
    axes.scatter([r.round for r in kept], [r.heldout_score for r in kept], color="#2a7", label="kept", zorder=3)
    axes.scatter(
        [r.round for r in reverted],
        [r.heldout_score for r in reverted],
        facecolors="none",
        edgecolors="#c33",
        label="reverted",
        zorder=3,
    )
    scores = [r.heldout_score for r in rounds]
    if all(0.0 <= s <= 1.0 for s in scores):  # a score in [0, 1]: show the whole range, not a zoom on noise
        axes.set_ylim(-0.03, 1.03)
    axes.set_xlabel("round")
    axes.set_ylabel("held-out score")
    axes.set_xticks(xs)
    axes.legend(loc="best", fontsize="small")
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return True
