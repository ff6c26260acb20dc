"""Precision and recall of the ``math`` judge (math-verify) and of the hand-written judge it replaced, on
the MATH-style fixture ``data/math_pairs.jsonl`` (gold, answer, whether they are equivalent).

``python tests/math_figures.py`` prints the README block; ``test_math_figures.py`` fails when the README's
block differs from what is measured (regenerate it with ``NENYAX_UPDATE_TIERS=1``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import attrs

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "data" / "math_pairs.jsonl"
README = HERE.parent / "README.md"
BLOCK = "math-judge"


@attrs.frozen
class Figures:
    """One judge's verdicts on the fixture."""

    name: str
    true_pos: int
    false_pos: int
    false_neg: int
    true_neg: int
    errors: int
    wrong: tuple[str, ...]
    """The pairs it judged wrongly, as ``gold / answer``."""

    @property
    def precision(self) -> float:
        called = self.true_pos + self.false_pos
        return self.true_pos / called if called else 0.0

    @property
    def recall(self) -> float:
        positives = self.true_pos + self.false_neg
        return self.true_pos / positives if positives else 0.0


def pairs() -> list[dict]:
    """The fixture's rows."""
    return [json.loads(line) for line in FIXTURE.read_text().splitlines() if line.strip()]


def measure(name: str, judge: Callable[[str, str], bool]) -> Figures:
    """`judge(answer, gold)` over every pair; a judge that raises counts as an error (and as not equal)."""
    counts = {"tp": 0, "fp": 0, "fn": 0, "tn": 0, "errors": 0}
    wrong = []
    for pair in pairs():
        try:
            said = judge(pair["answer"], pair["gold"])
        except Exception:  # noqa: BLE001 - a judge that raises anything counts as an error
            counts["errors"] += 1
            said = False
        key = ("t" if said == pair["equivalent"] else "f") + ("p" if said else "n")
        counts[key] += 1
        if said != pair["equivalent"]:
            wrong.append(f"`{pair['gold']}` / `{pair['answer']}`")
    return Figures(name, counts["tp"], counts["fp"], counts["fn"], counts["tn"], counts["errors"], tuple(wrong))


def both() -> list[Figures]:
    """The new judge and the old one, measured now."""
    sys.path.insert(0, str(HERE))
    from legacy_mathjudge import MathJudge as LegacyJudge

    from nenyax.adapters.datasets.mathjudge import MathJudge

    new, old = MathJudge(), LegacyJudge()
    return [
        measure("`math` (math-verify)", lambda a, g: bool(new.judge(a, g).passed)),
        measure("hand-written sympy judge (replaced)", lambda a, g: bool(old.judge(a, g).passed)),
    ]


def render(figures: list[Figures]) -> str:
    """The README block: one row per judge, then the pairs each got wrong."""
    rows = pairs()
    positives = sum(1 for r in rows if r["equivalent"])
    lines = [
        f"{len(rows)} gold/answer pairs: {positives} equivalent forms, {len(rows) - positives} near misses "
        "that must score 0.",
        "",
        "| judge | precision | recall | right | false accepts | false rejects | errors |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for f in figures:
        lines.append(
            f"| {f.name} | {f.precision:.3f} | {f.recall:.3f} | {f.true_pos + f.true_neg}/{len(rows)} "
            f"| {f.false_pos} | {f.false_neg} | {f.errors} |"
        )
    lines.append("")
    for f in figures:
        lines.append(f"- {f.name} judged wrongly: {', '.join(f.wrong) or 'none'}.")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render(both()), end="")
