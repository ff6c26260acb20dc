"""`check` over the registered gymnasium ids; the adapter README's tier table must match what is measured.

Measured with gymnasium[box2d,mujoco,jax] installed (the adapter's test dependency group). Each run
re-measures the whole table when anything its rows depend on changed since it was measured (the adapter,
core's checks and scoring path (`tables.SCORING_PATH`), this file, the versions of gymnasium and its
engines: the fingerprint recorded beside the table), else the anchors below plus a sample drawn from the
commit (`nenyax_testsupport.tables.TablePlan`; the rule is in tests/README.md). Regenerate the table and its
fingerprint with `NENYAX_UPDATE_TIERS=1 nox -s integration -- tests/test_gymnasium_tiers.py`;
`NENYAX_TIERS=all` re-measures everything without writing.
"""

import warnings
from pathlib import Path

import gymnasium
import pytest

import nenyax.adapters.gymnasium
import nenyax.core.tiers
from nenyax.adapters.gymnasium.adapter import GymnasiumAdapter
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

pytestmark = pytest.mark.timeout(1800)  # a whole-table run measures every registered id

README = Path(__file__).resolve().parents[1] / "packages/nenyax-adapters-gymnasium/README.md"
SAMPLES = 10

# A 1000-step CarRacing episode renders 1000 frames and records 27,648 numbers per observation;
# a shorter time limit tests the same things (seeded start, replay, classification) in seconds.
QUERY = {"CarRacing-v3": "?max_episode_steps=100"}

ROBOTICS = (
    "gymnasium moved its mujoco-py (v2/v3) envs to gymnasium-robotics; they need mujoco-py and the "
    "MuJoCo 2.1 binaries, which cannot be installed here (the v4/v5 ids are the maintained ones)."
)
SHIM = "A wrapper for envs of the old `gym` package (needs shimmy and an `env_id` to wrap), not an env itself."
# Why an id cannot be made here. An id that fails to load without an entry fails the test.
NOT_MADE = {
    **{
        f"{name}-v{v}": ROBOTICS
        for name in ("Ant", "HalfCheetah", "Hopper", "Humanoid", "Swimmer", "Walker2d")
        for v in (2, 3)
    },
    **{
        f"{name}-v2": ROBOTICS
        for name in ("HumanoidStandup", "InvertedDoublePendulum", "InvertedPendulum", "Pusher", "Reacher")
    },
    "GymV21Environment-v0": SHIM,
    "GymV26Environment-v0": SHIM,
    "Pusher-v4": "gymnasium supports Pusher-v4 only with mujoco<3 (Pusher-v5 replaces it); mujoco 3+ is installed.",
}
AUDITED = {"FrozenLake-v1", "FrozenLake8x8-v1", "Taxi-v4", "CliffWalking-v1", "CliffWalkingSlippery-v1"}
# Measured on every run: the audited ones (the test below asserts which ids audit), CartPole, and one id
# that cannot be made (seconds in all).
ANCHORS = {*AUDITED, "CartPole-v1", "GymV26Environment-v0"}
INPUTS = [
    Path(nenyax.adapters.gymnasium.__path__[0]),
    Path(nenyax.core.tiers.__path__[0]),
    Path(tables.__file__),
    Path(__file__),
]
DISTRIBUTIONS = ["gymnasium", "numpy", "mujoco", "box2d", "jax", "minigrid", "pygame"]


@pytest.fixture(scope="module")
def plan():
    made = TablePlan.make(
        README, every=GymnasiumAdapter.env_ids(), anchors=ANCHORS, inputs=INPUTS, distributions=DISTRIBUTIONS
    )
    warnings.warn(f"gymnasium tier table: {made.reason}.", stacklevel=1)
    return made


@pytest.fixture(scope="module")
def measured(plan):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecation notices of old env versions, mujoco's own warnings
        return {env_id: check(f"gymnasium:{env_id}{QUERY.get(env_id, '')}", samples=SAMPLES) for env_id in plan.names}


def why(env_id, report):
    if report.tier >= Tier.AUDITED:
        return ""
    if report.manifest is None:
        return NOT_MADE.get(env_id, "")
    reason = report.manifest.extra.get("reference") or ""
    if report.manifest.capabilities.stochastic and "No oracle" in reason:
        reason += " Its card draws are random, so even an optimal policy loses hands."
    return reason


def row(env_id, report):
    note = " (checked with `?max_episode_steps=100`)" if env_id in QUERY else ""
    line = tier_row(env_id, report)
    if report.tier < Tier.AUDITED:  # the adapter's own words first, then what the check saw
        reason = " ".join(part for part in (why(env_id, report), why_not_higher(report)) if part)
        line = line.rsplit("|", 2)[0] + f"| {reason}{note} |"
    if report.tier is Tier.NONE:
        line = line.replace("| none |", "| none (cannot be made) |", 1)
    return line


def render(measured):
    lines = [TIER_TABLE_HEAD.format(noun="env id"), *(row(env_id, report) for env_id, report in measured.items())]
    return "\n".join(lines) + f"\n\n{tier_summary(measured.values(), 'registered ids')}\n"


def test_every_registered_id_is_checked(plan, measured):
    registered = set(gymnasium.registry)  # every id the installed gymnasium registers has a row
    assert set(GymnasiumAdapter.env_ids()) == registered
    assert set(tables.table_rows(README, "tiers")) == registered
    assert set(measured) == (registered if plan.full else set(plan.names))
    for env_id, report in measured.items():
        if env_id in NOT_MADE:
            assert report.tier is Tier.NONE
            assert report.results[0].id == "connectable/loads"
            assert "gymnasium cannot make" in report.results[0].evidence, report.results[0].evidence
            continue
        assert report.tier >= Tier.TRAINABLE, (env_id, [f"{r.id}: {r.evidence}" for r in report.failed])
        assert (report.tier is Tier.AUDITED) == (env_id in AUDITED), env_id
        assert why(env_id, report) or report.tier is Tier.AUDITED, env_id


def test_readme_table_matches_measurement(plan, measured):
    if not plan.full:  # each measured row as the table has it
        rows = tables.table_rows(README, "tiers")
        stale = {env_id: (rows.get(env_id), row(env_id, report)) for env_id, report in measured.items()}
        stale = {env_id: pair for env_id, pair in stale.items() if pair[0] != pair[1]}
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
