"""`check` over every registered gymnasium id; the adapter README's tier table must match what is measured.

Measured with gymnasium[box2d,mujoco,jax] installed (the adapter's test dependency group). Regenerate
the table with `NENYAX_UPDATE_TIERS=1 nox -s integration`.
"""

import os
import warnings
from pathlib import Path

import gymnasium
import pytest

from nenyax.adapters.gymnasium.adapter import GymnasiumAdapter
from nenyax.core import Tier, check
from nenyax.testing.tables import TIER_TABLE_HEAD, sync_marked_block, tier_row, tier_summary, why_not_higher

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


@pytest.fixture(scope="module")
def measured():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecation notices of old env versions, mujoco's own warnings
        return {
            env_id: check(f"gymnasium:{env_id}{QUERY.get(env_id, '')}", samples=SAMPLES)
            for env_id in GymnasiumAdapter.env_ids()
        }


def why(env_id, report):
    if report.tier >= Tier.AUDITED:
        return ""
    if report.manifest is None:
        return NOT_MADE.get(env_id, "")
    reason = report.manifest.extra.get("reference") or ""
    if report.manifest.capabilities.stochastic and "No oracle" in reason:
        reason += " Its card draws are random, so even an optimal policy loses hands."
    return reason


def render(measured):
    lines = [TIER_TABLE_HEAD.format(noun="env id")]
    for env_id, report in measured.items():
        note = " (checked with `?max_episode_steps=100`)" if env_id in QUERY else ""
        row = tier_row(env_id, report)
        if report.tier < Tier.AUDITED:  # the adapter's own words first, then what the check saw
            reason = " ".join(part for part in (why(env_id, report), why_not_higher(report)) if part)
            row = row.rsplit("|", 2)[0] + f"| {reason}{note} |"
        if report.tier is Tier.NONE:
            row = row.replace("| none |", "| none (cannot be made) |", 1)
        lines.append(row)
    return "\n".join(lines) + f"\n\n{tier_summary(measured.values(), 'registered ids')}\n"


def test_every_registered_id_is_checked(measured):
    assert set(measured) == set(gymnasium.registry)  # every id the installed gymnasium registers
    for env_id, report in measured.items():
        if env_id in NOT_MADE:
            assert report.tier is Tier.NONE and report.results[0].id == "connectable/loads"
            assert "gymnasium cannot make" in report.results[0].evidence, report.results[0].evidence
            continue
        assert report.tier >= Tier.TRAINABLE, (env_id, [f"{r.id}: {r.evidence}" for r in report.failed])
        assert (report.tier is Tier.AUDITED) == (env_id in AUDITED), env_id
        assert why(env_id, report) or report.tier is Tier.AUDITED, env_id


def test_readme_table_matches_measurement(measured):
    table = render(measured)
    found = sync_marked_block(README, "tiers", table, update=bool(os.environ.get("NENYAX_UPDATE_TIERS")))
    assert found is not None, "The adapter README lost its tier table markers."
    assert found == table, "The tier table is stale; regenerate it with NENYAX_UPDATE_TIERS=1."
