"""`check` over every reasoning-gym dataset; the adapter README's tier table must match what is measured.

Regenerate the table with `NENYAX_UPDATE_TIERS=1 nox -s integration`.
"""

import os
from pathlib import Path

import pytest
import reasoning_gym.factory

from nenyax.adapters.reasoning_gym.adapter import ReasoningGymAdapter
from nenyax.core import Tier, check
from nenyax.testing.tables import sync_marked_block, tier_summary

README = Path(__file__).resolve().parents[1] / "packages/nenyax-adapters-reasoning-gym/README.md"

WHY_NO_REFERENCE = "No reference: many answers are valid and the metadata holds none, so an oracle needs a solver."
# Why each dataset stops below audited. A dataset that drops without an entry here fails the test.
WHY = {
    "boxnet": WHY_NO_REFERENCE,
    "rush_hour": WHY_NO_REFERENCE,
    "game_of_life_halting": "Its scorer gives 1.0 to any non-empty answer, so garbage scores like the reference.",
    "prime_factorization": "Its scorer raises on a non-numeric answer (verifier_error) instead of scoring garbage 0.",
}


@pytest.fixture(scope="module")
def measured():
    return {name: check(f"reasoning_gym:{name}") for name in ReasoningGymAdapter.datasets()}


def render(measured):
    lines = ["| dataset | tier | why not audited |", "| --- | --- | --- |"]
    for name, report in measured.items():
        lines.append(f"| {name} | {report.tier.label} | {WHY.get(name, '') if report.tier < Tier.AUDITED else ''} |")
    return "\n".join(lines) + f"\n\n{tier_summary(measured.values(), 'datasets')}\n"


def test_every_dataset_is_checked(measured):
    # Every dataset the installed reasoning-gym registers (the composite is checked on its own below).
    assert set(measured) == set(reasoning_gym.factory.DATASETS) - {"composite"}
    assert measured["basic_arithmetic"].tier is Tier.AUDITED
    for name, report in measured.items():
        assert report.tier >= Tier.TRAINABLE, (name, [r.evidence for r in report.failed])
        if report.tier < Tier.AUDITED:
            assert name in WHY, f"{name} reached {report.tier.label}: {[r.evidence for r in report.results]}"


def test_readme_table_matches_measurement(measured):
    table = render(measured)
    found = sync_marked_block(README, "tiers", table, update=bool(os.environ.get("NENYAX_UPDATE_TIERS")))
    assert found is not None, "The adapter README lost its tier table markers."
    assert found == table, "The tier table is stale; regenerate it with NENYAX_UPDATE_TIERS=1."


def test_composite_is_audited():
    assert check("reasoning_gym:chain_sum,leg_counting?size=30&seed=3").tier is Tier.AUDITED
