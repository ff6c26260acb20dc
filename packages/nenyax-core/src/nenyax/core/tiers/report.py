"""What `nenyax check` reports: each environment check's result, and the tier reached.

The types are the check framework's (`nenyax.core.contract.checking`), specialised: a tier check gates a
tier, and its result says which.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import attrs

from nenyax.core.contract.checking import Check, CheckReport, CheckResult, Verdict
from nenyax.core.contract.manifest import Manifest
from nenyax.core.contract.schema import SCHEMA_VERSION, Record, SchemaVersion
from nenyax.core.contract.trajectory import Tier

TierOutcome = Verdict
"""The name of `Verdict` before one check framework (issue 38); kept for one minor version. A tier check never
ends `Verdict.ERROR`: its crash is a failure of the environment."""


@attrs.frozen(kw_only=True)
class TierCheck(Check):
    """A check of an environment: the tier it gates, and the matching OpenEnv validation, where one exists."""

    tier: Tier
    openenv: str | None = None

    def __iter__(self) -> Iterator[Any]:
        """``(id, tier, run, openenv)``: the tuple a tier check was before issue 38, for one minor version."""
        return iter((self.id, self.tier, self.run, self.openenv))

    def __getitem__(self, index: int) -> Any:
        """``check[0]`` is its id, as the tuple's first item was (for one minor version)."""
        return (self.id, self.tier, self.run, self.openenv)[index]


@attrs.frozen(kw_only=True)
class TierResult(CheckResult):
    """One environment check's result: its verdict and evidence, and the tier it gates."""

    tier: Tier
    openenv: str | None = None
    """The matching OpenEnv environment-validation check id, where one exists."""

    @classmethod
    def of(cls, check: TierCheck, result: CheckResult) -> TierResult:
        """`result` of `check`, with the tier it gates."""
        fields = {f.name: getattr(result, f.name) for f in attrs.fields(CheckResult)}
        return cls(**fields, tier=check.tier, openenv=check.openenv)


@attrs.frozen(kw_only=True)
class Floor(Record):
    """What the audit measured: the best cheap policy's mean score against the reference's."""

    probe: str
    """The cheap policy that scored best, in words (e.g. "a constant answer '0'")."""
    score: float
    reference: float
    margin: float
    """(reference - score), as a share of the declared score range when there is one, else in score units."""
    required: float
    """The margin `audited` asks for."""
    tasks: int
    """How many tasks were sampled (the reference's)."""
    upper: float | None = None
    """The 95% upper bound of the floor's mean (`nenyax.core.engine.summary.interval`), reported beside the
    margin; None in reports before 1.3."""
    floor_tasks: int = 0
    """How many tasks the cheap policies played (step mode: up to `FLOOR_TASKS`, beyond the sampled ones)."""


@attrs.frozen(kw_only=True)
class TierReport(CheckReport):
    """Every check run on one environment and the tier it reached."""

    uri: str
    tier: Tier
    results: tuple[TierResult, ...]
    manifest: Manifest | None = None
    samples: int = 0
    seed: int = 0
    floor: Floor | None = None
    """The audit's floor and margin, when the audit got that far."""
    model_results: tuple[TierResult, ...] = ()
    """Checks of a model on the environment (``--model``, e.g. token fidelity): reported, never part of `tier`."""
    model: str | None = None
    """The model those checks ran with (``provider:model``)."""
    judges: tuple[str, ...] = ()
    """The judges every episode was scored under (``check --judge``); empty: the format's own verifier."""
    score: str | None = None
    """How the score was composed from their verdicts (``--score``), when judges were put on."""
    schema_version: SchemaVersion = SCHEMA_VERSION

    @property
    def failed(self) -> tuple[TierResult, ...]:
        """Checks that ran and failed."""
        return tuple(r for r in self.results if r.outcome is Verdict.FAILED)


def reached_tier(results: tuple[TierResult, ...]) -> Tier:
    """The highest tier whose checks, and all checks below it, passed."""
    reached = Tier.NONE
    for tier in sorted({r.tier for r in results}):
        if any(r.outcome is not Verdict.PASSED for r in results if r.tier == tier):
            break
        reached = tier
    return reached
