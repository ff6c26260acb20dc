"""Tier tables kept in READMEs: one measured, one written, a test failing when they drift apart."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from nenyax.core.tiers.check import CheckReport


def tier_summary(reports: Iterable[CheckReport], noun: str) -> str:
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
