"""`check` over every reasoning-gym dataset; the adapter README's tier table must match what is measured.

Regenerate the table with `NENYAX_UPDATE_TIERS=1 nox -s integration` (nox sets PYTHONHASHSEED=0; the rows of
the hash-seed-dependent datasets quote this process's first observation, so measure under the same hash seed).
"""

import os
from pathlib import Path

import pytest
import reasoning_gym.factory

from nenyax.adapters.reasoning_gym.adapter import ReasoningGymAdapter
from nenyax.core import Tier, check
from nenyax.testing.tables import TIER_TABLE_HEAD, sync_marked_block, tier_row, tier_summary, why_not_higher

README = Path(__file__).resolve().parents[1] / "packages/nenyax-adapters-reasoning-gym/README.md"

# Datasets whose generation iterates sets, so a task depends on PYTHONHASHSEED: never trainable.
HASH_SEED_SENSITIVE = {"isomorphic_strings", "knight_swap", "polynomial_multiplication", "ransom_note", "word_ladder"}


@pytest.fixture(scope="module")
def measured():
    return {name: check(f"reasoning_gym:{name}") for name in ReasoningGymAdapter.datasets()}


def render(measured):
    lines = [TIER_TABLE_HEAD.format(noun="dataset"), *(tier_row(name, report) for name, report in measured.items())]
    return "\n".join(lines) + f"\n\n{tier_summary(measured.values(), 'datasets')}\n"


def test_every_dataset_is_checked(measured):
    # Every dataset the installed reasoning-gym registers (the composite is checked on its own below).
    assert set(measured) == set(reasoning_gym.factory.DATASETS) - {"composite"}
    assert measured["basic_arithmetic"].tier is Tier.AUDITED
    for name, report in measured.items():
        assert report.tier >= Tier.EVALUABLE, (name, [r.evidence for r in report.failed])
        if report.tier < Tier.AUDITED:
            assert why_not_higher(report).endswith((".", ")", "...")), (name, why_not_higher(report))


def test_a_constant_answer_cannot_earn_audited(measured):
    coin = measured["coin_flip"]
    assert coin.tier is Tier.TRAINABLE and coin.floor is not None and coin.floor.margin < 0.3
    assert "constant answer" in why_not_higher(coin)


def test_hash_seed_sensitive_datasets_are_not_trainable(measured):
    for name in HASH_SEED_SENSITIVE:
        report = measured[name]
        assert report.tier < Tier.TRAINABLE, name
        fresh = next(r for r in report.results if r.id == "trainable/fresh-process")
        assert fresh.outcome.value == "failed" and "PYTHONHASHSEED" in fresh.evidence, (name, fresh.evidence)


def test_readme_table_matches_measurement(measured):
    table = render(measured)
    found = sync_marked_block(README, "tiers", table, update=bool(os.environ.get("NENYAX_UPDATE_TIERS")))
    assert found is not None, "The adapter README lost its tier table markers."
    assert found == table, "The tier table is stale; regenerate it with NENYAX_UPDATE_TIERS=1."


def test_composite_is_audited():
    assert check("reasoning_gym:chain_sum,leg_counting?size=30&seed=3").tier is Tier.AUDITED
