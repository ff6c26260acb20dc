"""What `nenyax check` reports: each environment check's outcome and evidence, and the tier reached."""

from __future__ import annotations

import enum

import attrs

from nenyax.core.contract.manifest import Manifest
from nenyax.core.contract.schema import SCHEMA_VERSION, Record, SchemaVersion
from nenyax.core.contract.trajectory import Tier


class TierOutcome(enum.Enum):
    """What happened to one check."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"


@attrs.frozen(kw_only=True)
class TierResult(Record):
    """One check's outcome and the evidence for it."""

    id: str
    """Stable id, ``<tier>/<what>``."""
    tier: Tier
    outcome: TierOutcome
    evidence: str
    """What was observed, in a sentence or two."""
    seconds: float
    openenv: str | None = None
    """The matching OpenEnv environment-validation check id, where one exists."""


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
class TierReport(Record):
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
    schema_version: SchemaVersion = SCHEMA_VERSION

    @property
    def failed(self) -> tuple[TierResult, ...]:
        """Checks that ran and failed."""
        return tuple(r for r in self.results if r.outcome is TierOutcome.FAILED)


def reached_tier(results: tuple[TierResult, ...]) -> Tier:
    """The highest tier whose checks, and all checks below it, passed."""
    reached = Tier.NONE
    for tier in sorted({r.tier for r in results}):
        if any(r.outcome is not TierOutcome.PASSED for r in results if r.tier == tier):
            break
        reached = tier
    return reached
