"""`check` over every reasoning-gym dataset; the adapter README's tier table must match what is measured.

Regenerate the table with `NENYAX_UPDATE_TIERS=1 nox -s integration`.
"""

import os
import re
from pathlib import Path

import pytest

from nenyax.adapters.reasoning_gym.adapter import ReasoningGymAdapter
from nenyax.core import Tier, check

README = Path(__file__).resolve().parents[1] / "packages/nenyax-adapters-reasoning-gym/README.md"
TABLE = re.compile(r"<!-- tiers:start -->\n(.*?)<!-- tiers:end -->", re.DOTALL)

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
    counts = {}
    for report in measured.values():
        counts[report.tier.label] = counts.get(report.tier.label, 0) + 1
    summary = ", ".join(f"{n} {tier}" for tier, n in sorted(counts.items(), key=lambda kv: -kv[1]))
    return "\n".join(lines) + f"\n\n{len(measured)} datasets: {summary}.\n"


def test_every_dataset_is_checked(measured):
    assert len(measured) == 105
    assert measured["basic_arithmetic"].tier is Tier.AUDITED
    for name, report in measured.items():
        assert report.tier >= Tier.TRAINABLE, (name, [r.evidence for r in report.failed])
        if report.tier < Tier.AUDITED:
            assert name in WHY, f"{name} reached {report.tier.label}: {[r.evidence for r in report.results]}"


def test_readme_table_matches_measurement(measured):
    table = render(measured)
    text = README.read_text()
    if os.environ.get("NENYAX_UPDATE_TIERS"):
        README.write_text(TABLE.sub(lambda _: f"<!-- tiers:start -->\n{table}<!-- tiers:end -->", text))
        text = README.read_text()
    found = TABLE.search(text)
    assert found, "The adapter README lost its tier table markers."
    assert found.group(1) == table, "The tier table is stale; regenerate it with NENYAX_UPDATE_TIERS=1."


def test_composite_is_audited():
    assert check("reasoning_gym:chain_sum,leg_counting?size=30&seed=3").tier is Tier.AUDITED
