"""What a run of many episodes measured: mean score with an interval, pass@k, status counts, tokens, speed.

Only judged episodes are scored (``ok`` and ``policy_error``, the latter as 0): an infrastructure,
environment or verifier failure, or a timeout, is counted under its status and never becomes a 0.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Iterable, Sequence

import attrs

from nenyax.core.contract.schema import SCHEMA_VERSION, Record, SchemaVersion
from nenyax.core.contract.trajectory import Status, Trajectory

Z_95 = 1.959963984540054
"""The two-sided 95% quantile of the normal distribution."""


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k estimator of the Codex paper (Chen et al. 2021): ``1 - C(n-c, k) / C(n, k)``.

    `n` samples of a task, `c` of them passed, `k` <= `n`.
    """
    if not 0 <= c <= n or not 1 <= k <= n:
        msg = f"pass@k needs 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}."
        raise ValueError(msg)
    if n - c < k:
        return 1.0
    # The product form avoids huge binomials: C(n-c, k) / C(n, k) = prod_{i=n-c+1}^{n} (1 - k / i).
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


BOOTSTRAP_RESAMPLES = 2000
"""Resamples of a graded run's bootstrap interval (fewer past `BOOTSTRAP_MAX_WORK` scores x resamples)."""
BOOTSTRAP_MAX_WORK = 2_000_000
NORMAL_FROM = 20_000
"""Past this many graded scores the normal approximation is used (clipped to the scores' range)."""


def wilson(successes: int, n: int) -> tuple[float, float]:
    """The Wilson score interval (95%) of a proportion: inside [0, 1] always, sound at 0 of n and n of n."""
    p = successes / n
    z2 = Z_95 * Z_95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z_95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def interval(scores: Sequence[float]) -> tuple[tuple[float, float] | None, str | None]:
    """The 95% interval of the mean of `scores` and the method that made it; (None, None) under 2 scores.

    Pass/fail scores (every one 0 or 1): the Wilson interval. Graded scores: a percentile bootstrap of the
    mean, seeded (the same scores always give the same interval); past `NORMAL_FROM` scores the normal
    approximation, clipped to the scores' range. Every method stays inside the range the scores span, so
    inside the environment's declared score range.
    """
    n = len(scores)
    if n < 2:
        return None, None
    if all(s in (0.0, 1.0) for s in scores):
        return wilson(sum(1 for s in scores if s == 1.0), n), "wilson"
    low, high = min(scores), max(scores)
    mean = math.fsum(scores) / n
    if n > NORMAL_FROM:
        stdev = math.sqrt(math.fsum((s - mean) ** 2 for s in scores) / (n - 1))
        half = Z_95 * stdev / math.sqrt(n)
        return (max(low, mean - half), min(high, mean + half)), "normal"
    rng = random.Random(0)
    resamples = max(200, min(BOOTSTRAP_RESAMPLES, BOOTSTRAP_MAX_WORK // n))
    means = sorted(math.fsum(rng.choices(scores, k=n)) / n for _ in range(resamples))
    return (means[int(0.025 * (resamples - 1))], means[math.ceil(0.975 * (resamples - 1))]), "bootstrap"


def passed(traj: Trajectory, threshold: float) -> bool:
    """Whether a judged episode counts as solved: the judge's own `passed`, else ``score >= threshold``."""
    if traj.judgment is None:
        return False
    if traj.judgment.passed is not None:
        return traj.judgment.passed
    return traj.judgment.score >= threshold


def tokens(traj: Trajectory) -> tuple[int, int]:
    """Prompt and completion tokens of an episode's model calls (token ids where recorded, else usage)."""
    prompt = completion = 0
    for call in traj.model_calls:
        if call.prompt_token_ids is not None:
            prompt += len(call.prompt_token_ids)
        else:
            prompt += int(call.usage.get("prompt_tokens", 0) or 0)
        if call.completion_token_ids is not None:
            completion += len(call.completion_token_ids)
        else:
            completion += int(call.usage.get("completion_tokens", 0) or 0)
    return prompt, completion


@attrs.frozen(kw_only=True)
class Summary(Record):
    """The figures of one run, as `summary.json` holds them (written and read by `serde`, as every record)."""

    episodes: int
    """Every episode recorded, whatever its status."""
    scored: int
    """Episodes with a judgment (``ok`` and ``policy_error``)."""
    mean: float | None
    """Mean score of the scored episodes (None when none was scored)."""
    ci95: tuple[float, float] | None
    """95% confidence interval of the mean (`ci_method` says how; None with fewer than 2 scored)."""
    stdev: float | None
    """Sample standard deviation of the scores."""
    pass_threshold: float
    """A score at or above this passes, when the judge does not say `passed` itself."""
    pass_at_k: dict[str, float]
    """``{"1": ..., "2": ...}``: the unbiased estimator, averaged over the tasks with at least k scored samples."""
    samples: int
    """Samples per task the run asked for."""
    tasks: int
    """Distinct tasks recorded."""
    statuses: dict[str, int]
    """Episodes per status (every status named, zeros included)."""
    tokens_in: int
    tokens_out: int
    wall_s: float | None = None
    """Wall time of the invocation that finished the run (a resumed run: of the resuming part only)."""
    episodes_per_s: float | None = None
    """Episodes that invocation played, per second of `wall_s`."""
    resumed: int = 0
    """Episodes already recorded when the finishing invocation started (0 unless it was ``--resume``)."""
    ci_method: str | None = None
    """How `ci95` was made (`interval`): ``wilson`` (pass/fail scores), ``bootstrap`` (graded), ``normal``
    (many graded scores); None without an interval. Summaries before 1.3 used the normal approximation."""
    schema_version: SchemaVersion = SCHEMA_VERSION
    """Layout version of the persisted record (summaries written before 1.1 had none)."""


class Tally:
    """A run's figures gathered one episode at a time, so a long run need not keep its trajectories.

    ``tally.add(traj)`` for each episode (in any order), then ``tally.summary(...)``; `summarize` is
    this over an iterable. What it keeps per episode is a score and a pass flag, not the trajectory.
    """

    def __init__(self, *, threshold: float = 1.0) -> None:
        """Count passes at `threshold` where the judge does not say `passed` itself."""
        self.threshold = threshold
        self.statuses: Counter[str] = Counter({s.value: 0 for s in Status})
        self.scores: list[float] = []
        self.per_task: dict[str | None, list[bool]] = {}
        self.tokens_in = self.tokens_out = self.episodes = 0

    def add(self, traj: Trajectory) -> None:
        """Count one episode."""
        self.episodes += 1
        self.statuses[traj.status.value] += 1
        p, c = tokens(traj)
        self.tokens_in += p
        self.tokens_out += c
        results = self.per_task.setdefault(traj.task_id, [])
        if traj.judgment is not None and traj.status.trainable:
            self.scores.append(traj.judgment.score)
            results.append(passed(traj, self.threshold))

    def summary(self, *, samples: int = 1, wall_s: float | None = None, resumed: int = 0) -> Summary:
        """The `Summary` of every episode added; `resumed` of them were recorded before `wall_s` began."""
        scores = self.scores
        mean = math.fsum(scores) / len(scores) if scores else None
        stdev = None
        if mean is not None and len(scores) >= 2:
            stdev = math.sqrt(math.fsum((s - mean) ** 2 for s in scores) / (len(scores) - 1))
        ci, method = interval(scores)
        at_k: dict[str, float] = {}
        for k in range(1, samples + 1):
            values = [pass_at_k(len(r), sum(r), k) for r in self.per_task.values() if len(r) >= k]
            if values:
                at_k[str(k)] = math.fsum(values) / len(values)
        return Summary(
            episodes=self.episodes,
            scored=len(scores),
            mean=mean,
            ci95=ci,
            ci_method=method,
            stdev=stdev,
            pass_threshold=self.threshold,
            pass_at_k=at_k,
            samples=samples,
            tasks=len(self.per_task),
            statuses=dict(self.statuses),
            tokens_in=self.tokens_in,
            tokens_out=self.tokens_out,
            wall_s=wall_s,
            episodes_per_s=(self.episodes - resumed) / wall_s if wall_s else None,
            resumed=resumed,
        )


def summarize(
    trajectories: Iterable[Trajectory],
    *,
    samples: int = 1,
    threshold: float = 1.0,
    wall_s: float | None = None,
    resumed: int = 0,
) -> Summary:
    """Compute a run's `Summary` from its trajectories; `resumed` of them were recorded before `wall_s` began."""
    tally = Tally(threshold=threshold)
    for traj in trajectories:
        tally.add(traj)
    return tally.summary(samples=samples, wall_s=wall_s, resumed=resumed)
