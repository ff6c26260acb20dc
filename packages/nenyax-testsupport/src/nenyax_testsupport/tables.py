"""Tier tables kept in READMEs: one measured, one written, a test failing when they drift apart."""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import random
import re
import subprocess
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import attrs

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


# ---------------------------------------------------------------- what a test run re-measures

_INPUTS = re.compile(r"<!-- (?P<name>[\w-]+):inputs (?P<digest>sha256:[0-9a-f]+) -->")


# Core's modules that decide a tier table's score, in every table (their files join each table's own inputs).
# A row's floor and tier come from scores, and a score flows through these before the adapter's verifier or
# after it: `answers` reads the answer out of a reply (`extract_answer`) and makes the constant and garbage
# answers the floor probes play; `qa` is the question session that scores each reply and composes its
# judgment; `session` is the base session whose step and judge the loop calls; `step_loop` runs the episode
# and decides which judgment or failure status (policy_error's zero, verifier_error's none) a trajectory
# keeps; `return_judge` is the return judge that composes a step environment's (Gymnasium's) judgment.
# Left out on purpose, so that an ordinary core edit does not re-measure whole tables on CI (reasoning-gym's
# alone takes some 18 minutes): the runner, executors, sinks, run directories and the environment class
# (they carry trajectories, never change a score), `policies` (hands a probe's action on unchanged),
# `summary` (its `interval` only words the floor's 95% upper bound in the evidence; the tally beside it
# changes often), and `contract` (the records that carry a score hold it; they never compute one).
# Core's checks (`nenyax.core.tiers`) are each table's own input already.
SCORING_PATH = (
    "nenyax.core.engine.answers",
    "nenyax.core.engine.qa",
    "nenyax.core.engine.session",
    "nenyax.core.engine.step_loop",
    "nenyax.core.builtin_plugins.return_judge",
)


def scoring_path() -> list[Path]:
    """The files of `SCORING_PATH`, as installed; a module that moved fails here, never drops out silently."""
    files = []
    for name in SCORING_PATH:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            msg = f"{name} is in the tier tables' scoring path but cannot be found; update SCORING_PATH."
            raise RuntimeError(msg)
        files.append(Path(spec.origin))
    return files


def inputs_fingerprint(paths: Iterable[Path], distributions: Iterable[str]) -> str:
    """``sha256:...`` of what a tier table's rows depend on: the Python files under `paths` (their
    relative paths and bytes) and the installed versions of `distributions` (a missing one counts too)."""
    # Ordered by the names hashed, never by where the files lie: a checkout, an installed wheel or a copy
    # of the same files gives the same fingerprint.
    files: dict[str, Path] = {}
    for root in paths:
        found = [root] if root.is_file() else (p for p in root.rglob("*.py") if "__pycache__" not in p.parts)
        for file in found:
            name = file.relative_to(root.parent).as_posix()
            if files.setdefault(name, file) != file:
                msg = f"Two inputs of a tier table are named {name} ({files[name]}, {file}): pass their folder."
                raise RuntimeError(msg)
    digest = hashlib.sha256()
    for name, file in sorted(files.items()):
        digest.update(f"{name}\0".encode() + file.read_bytes() + b"\0")
    for name in sorted(distributions):
        try:
            version = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            version = "not installed"
        digest.update(f"{name}=={version}\0".encode())
    return "sha256:" + digest.hexdigest()


def recorded_fingerprint(path: Path, name: str) -> str | None:
    """The inputs fingerprint written beside the ``name`` table in `path`, if any."""
    for found in _INPUTS.finditer(path.read_text()):
        if found["name"] == name:
            return found["digest"]
    return None


def record_fingerprint(path: Path, name: str, fingerprint: str) -> None:
    """Write `fingerprint` beside the ``name`` table in `path` (right after its end marker)."""
    text = path.read_text()
    line = f"<!-- {name}:inputs {fingerprint} -->"
    if recorded_fingerprint(path, name) is not None:
        text = _INPUTS.sub(lambda m: line if m["name"] == name else m[0], text)
    else:
        text = text.replace(f"<!-- {name}:end -->", f"<!-- {name}:end -->\n{line}", 1)
    path.write_text(text)


def table_rows(path: Path, name: str) -> dict[str, str]:
    """The rows of the ``name`` table in `path`, by their first cell."""
    block = sync_marked_block(path, name, "", update=False) or ""
    rows = [line for line in block.splitlines() if line.startswith("| ") and not line.startswith("| ---")]
    return {row.split(" | ", 1)[0][2:]: row for row in rows[1:]}  # rows[0] is the head


@attrs.frozen(kw_only=True)
class TablePlan:
    """Which rows of a README tier table one test run re-measures, and why.

    The whole table when anything its rows depend on changed since it was measured (the inputs
    fingerprint beside it differs: `inputs`, core's `SCORING_PATH` and `distributions`' versions), when it
    is being regenerated, or when ``NENYAX_TIERS=all``; otherwise the anchors plus a sample of the rest,
    drawn from the commit being tested, so every commit checks other rows and a rerun of one commit checks
    the same ones.
    """

    names: tuple[str, ...]
    """The rows to measure, in table order."""
    full: bool
    """Whether that is every row (then the whole table, summary line included, is compared)."""
    reason: str
    """Why, in words, for the test log."""
    fingerprint: str
    """The inputs fingerprint now: what a regenerated table records beside itself."""

    @classmethod
    def make(
        cls,
        readme: Path,
        *,
        every: Iterable[str],
        anchors: Iterable[str] = (),
        inputs: Iterable[Path],
        distributions: Iterable[str],
        sample: int = 10,
        table: str = "tiers",
    ) -> TablePlan:
        """Plan a run over `every` name, re-measuring the whole table only when it must."""
        every, anchors = list(every), [a for a in anchors if a in set(every)]
        fingerprint = inputs_fingerprint([*scoring_path(), *inputs], distributions)
        recorded = recorded_fingerprint(readme, table)
        if updating():
            why = "regenerating the table (NENYAX_UPDATE_TIERS)"
        elif os.environ.get("NENYAX_TIERS") == "all":
            why = "NENYAX_TIERS=all"
        elif recorded != fingerprint:
            why = (
                "no inputs fingerprint is recorded" if recorded is None else "its inputs changed since it was measured"
            )
        else:
            why = ""
        if why:
            return cls(names=tuple(every), full=True, reason=f"every row: {why}", fingerprint=fingerprint)
        seed = _commit()
        rest = [n for n in every if n not in anchors]
        drawn = random.Random(seed).sample(rest, min(int(os.environ.get("NENYAX_TIERS_SAMPLE", sample)), len(rest)))
        names = tuple(n for n in every if n in set(anchors) | set(drawn))  # in table order
        reason = f"{len(names)} of {len(every)} rows: {len(anchors)} anchors, {len(drawn)} drawn for commit {seed[:12]}"
        return cls(names=names, full=False, reason=reason, fingerprint=fingerprint)


def updating() -> bool:
    """True when the tables are being regenerated; never on CI, where a table must be checked, not written."""
    if not os.environ.get("NENYAX_UPDATE_TIERS"):
        return False
    if os.environ.get("CI"):
        msg = "NENYAX_UPDATE_TIERS is set on CI: CI checks the tier tables and never rewrites them."
        raise RuntimeError(msg)
    return True


def _commit() -> str:
    """The commit under test (the sample's seed); a tree outside git samples with a fixed seed."""
    try:
        done = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "0" * 40
    return done.stdout.strip()
