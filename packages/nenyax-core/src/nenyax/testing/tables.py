"""Tier tables kept in READMEs: one measured, one written, a test failing when they drift apart."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from nenyax.core.contract.trajectory import Tier
from nenyax.core.tiers.measure import TierOutcome, TierReport


def tier_summary(reports: Iterable[TierReport], noun: str) -> str:
    """``"105 datasets: 101 audited, 4 trainable."``, most frequent tier first."""
    counts = Counter(report.tier.label for report in reports)
    parts = ", ".join(f"{n} {tier}" for tier, n in counts.most_common())
    return f"{sum(counts.values())} {noun}: {parts}."


def sync_marked_block(path: Path, name: str, content: str, *, update: bool) -> str | None:
    """The text between ``<!-- name:start -->`` and ``<!-- name:end -->`` in `path` (None if the markers
    are gone), after replacing it with `content` first when `update` is true.
    """
    block = re.compile(rf"<!-- {name}:start -->\n(.*?)<!-- {name}:end -->", re.DOTALL)
    text = path.read_text()
    if update:
        text = block.sub(lambda _: f"<!-- {name}:start -->\n{content}<!-- {name}:end -->", text)
        path.write_text(text)
    found = block.search(text)
    return None if found is None else found.group(1)


def why_not_higher(report: TierReport, width: int = 160) -> str:
    """The evidence of the first check that did not pass (what stopped the tier), shortened for a table."""
    for result in report.results:
        if result.outcome is not TierOutcome.PASSED:
            text = " ".join(result.evidence.split()).replace("|", "/")
            return text if len(text) <= width else text[: width - 3] + "..."
    return ""


def tier_row(name: str, report: TierReport) -> str:
    """``| name | tier | floor | margin | why not audited |`` for one measured environment."""
    floor = report.floor
    shown = f"{floor.probe}: {floor.score:.2f}" if floor else ""
    margin = f"{floor.margin:.2f}" if floor else ""
    why = why_not_higher(report) if report.tier < Tier.AUDITED else ""
    return f"| {name} | {report.tier.label} | {shown} | {margin} | {why} |"


_COLUMNS = ("{noun}", "tier", "floor (best cheap policy: mean score)", "margin", "why not audited")
TIER_TABLE_HEAD = "| " + " | ".join(_COLUMNS) + " |\n" + "| --- " * len(_COLUMNS) + "|"
"""The head of a tier table; `tier_row` gives its rows."""
