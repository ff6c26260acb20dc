"""`check` over reasoning-gym's datasets; the adapter README's tier table must match what is measured.

Each run re-measures the whole table when anything its rows depend on changed since it was measured
(the adapter, core's checks and scoring path (`tables.SCORING_PATH`: answer extraction, the question
session, the step loop's judgment), this file, reasoning-gym's version: the fingerprint recorded beside the
table), else the anchors below plus a sample drawn from the commit (`nenyax_testsupport.tables.TablePlan`;
the rule is in tests/README.md). Regenerate the table and its fingerprint with
`NENYAX_UPDATE_TIERS=1 nox -s integration -- tests/test_reasoning_gym_tiers.py` (nox sets
PYTHONHASHSEED=0; the rows of the hash-seed-dependent datasets quote this process's first observation,
so measure under the same hash seed). `NENYAX_TIERS=all` re-measures everything without writing.
"""

import warnings
from pathlib import Path

import pytest
import reasoning_gym.factory

import nenyax.adapters.reasoning_gym
import nenyax.core.tiers
from nenyax.adapters.reasoning_gym.adapter import ReasoningGymAdapter
from nenyax.core import Tier, check
from nenyax_testsupport import tables
from nenyax_testsupport.tables import (
    TIER_TABLE_HEAD,
    TablePlan,
    sync_marked_block,
    tier_row,
    tier_summary,
    why_not_higher,
)

pytestmark = pytest.mark.timeout(1800)  # a whole-table run measures 105 datasets

README = Path(__file__).resolve().parents[1] / "packages/nenyax-adapters-reasoning-gym/README.md"

# Datasets whose generation iterates sets, so a task depends on PYTHONHASHSEED: never trainable.
HASH_SEED_SENSITIVE = {"isomorphic_strings", "knight_swap", "polynomial_multiplication", "ransom_note", "word_ladder"}
# Measured on every run: the ones the tests below assert on by name.
ANCHORS = {"basic_arithmetic", "coin_flip", *HASH_SEED_SENSITIVE}
INPUTS = [
    Path(nenyax.adapters.reasoning_gym.__path__[0]),
    Path(nenyax.core.tiers.__path__[0]),
    Path(tables.__file__),
    Path(__file__),
]
DISTRIBUTIONS = ["reasoning-gym"]


# Rows whose check costs minutes (their scorers run sympy or a tree edit distance on every floor probe's
# answer: intermediate_integration took 518 s on the 2-core box, codeio several minutes), so a commit that drew one
# into its sample ran the integration session up to 8 minutes longer. They are re-measured with the whole table,
# whenever anything a row depends on changes, and are never drawn into a per-commit sample.
COSTLY = {"codeio", "intermediate_integration"}


@pytest.fixture(scope="module")
def plan():
    every = ReasoningGymAdapter.datasets()
    made = TablePlan.make(README, every=every, anchors=ANCHORS, inputs=INPUTS, distributions=DISTRIBUTIONS)
    if not made.full:  # the sample, drawn from the rows that are cheap to measure
        cheap = [name for name in every if name not in COSTLY]
        made = TablePlan.make(README, every=cheap, anchors=ANCHORS, inputs=INPUTS, distributions=DISTRIBUTIONS)
    warnings.warn(f"reasoning-gym tier table: {made.reason} (never sampled: {sorted(COSTLY)}).", stacklevel=1)
    return made


@pytest.fixture(scope="module")
def measured(plan):
    return {name: check(f"reasoning_gym:{name}") for name in plan.names}


def render(measured):
    lines = [TIER_TABLE_HEAD.format(noun="dataset"), *(tier_row(name, report) for name, report in measured.items())]
    return "\n".join(lines) + f"\n\n{tier_summary(measured.values(), 'datasets')}\n"


def test_every_dataset_is_checked(plan, measured):
    # Every dataset the installed reasoning-gym registers (the composite is checked on its own below) has a row.
    registered = set(reasoning_gym.factory.DATASETS) - {"composite"}
    assert set(ReasoningGymAdapter.datasets()) == registered
    assert set(tables.table_rows(README, "tiers")) == registered
    assert set(measured) == (registered if plan.full else set(plan.names))
    assert measured["basic_arithmetic"].tier is Tier.AUDITED
    for name, report in measured.items():
        assert report.tier >= Tier.EVALUABLE, (name, [r.evidence for r in report.failed])
        if report.tier < Tier.AUDITED:
            assert why_not_higher(report).endswith((".", ")", "...")), (name, why_not_higher(report))


def test_a_constant_answer_cannot_earn_audited(measured):
    coin = measured["coin_flip"]
    assert coin.tier is Tier.TRAINABLE
    assert coin.floor is not None
    assert coin.floor.margin < 0.3
    assert "constant answer" in why_not_higher(coin)


def test_hash_seed_sensitive_datasets_are_not_trainable(measured):
    for name in HASH_SEED_SENSITIVE:
        report = measured[name]
        assert report.tier < Tier.TRAINABLE, name
        fresh = next(r for r in report.results if r.id == "trainable/fresh-process")
        assert fresh.outcome.value == "failed", (name, fresh.evidence)
        assert "PYTHONHASHSEED" in fresh.evidence, (name, fresh.evidence)


def test_readme_table_matches_measurement(plan, measured):
    if not plan.full:  # each measured row as the table has it
        rows = tables.table_rows(README, "tiers")
        stale = {name: (rows.get(name), tier_row(name, report)) for name, report in measured.items()}
        stale = {name: pair for name, pair in stale.items() if pair[0] != pair[1]}
        assert not stale, (
            f"Rows differ from the table (README, measured): {stale}; regenerate with NENYAX_UPDATE_TIERS=1."
        )
        return
    table = render(measured)
    found = sync_marked_block(README, "tiers", table, update=tables.updating())
    if tables.updating():
        tables.record_fingerprint(README, "tiers", plan.fingerprint)
    assert found is not None, "The adapter README lost its tier table markers."
    assert found == table, "The tier table is stale; regenerate it with NENYAX_UPDATE_TIERS=1."


def test_composite_is_audited():
    assert check("reasoning_gym:chain_sum,leg_counting?size=30&seed=3").tier is Tier.AUDITED
