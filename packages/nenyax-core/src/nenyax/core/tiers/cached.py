"""The last tier `nenyax check` measured for each environment, kept so `nenyax list` can show it.

One small JSON file per environment under ``$NENYAX_CHECKS_DIR``, else ``<cache>/checks/``. Only a
check at least as strict as the default (``--samples`` and ``--margin`` no lower) is kept: a weaker
one is no evidence for the listing. A check whose environment no longer loads forgets the old tier.
A result is shown only while the nenyax distributions that measured it (nenyax-core and the adapter's
distribution) are installed at the versions that measured it: a tier measured by other code is not
evidence about this code, so it reads as stale rather than as a tier. Installing another, unrelated
distribution changes nothing. (The format library's own version is recorded with the manifest digest,
not compared.)
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from pathlib import Path

import attrs
import orjson

from nenyax.core.contract import serde
from nenyax.core.contract.trajectory import Tier
from nenyax.core.engine.cache import cache_root
from nenyax.core.engine.rundirs import nenyax_versions
from nenyax.core.errors import NenyaxError
from nenyax.core.plugins.registry import default_registry
from nenyax.core.tiers.checks import DEFAULT_MARGIN
from nenyax.core.tiers.measure import DEFAULT_SAMPLES
from nenyax.core.tiers.report import TierReport


@attrs.frozen(kw_only=True)
class CachedTier:
    """What a past `check` of one environment measured, and whether it still speaks for this install."""

    uri: str
    tier: Tier
    checked: str
    """When, as an ISO 8601 UTC time."""
    samples: int
    seed: int
    current: bool
    """False when the nenyax versions installed differ from those that measured it."""


def checks_dir() -> Path:
    """Where the records live: ``$NENYAX_CHECKS_DIR``, else ``<cache>/checks`` (test suites point it elsewhere)."""
    explicit = os.environ.get("NENYAX_CHECKS_DIR")
    return Path(explicit).expanduser() if explicit else cache_root() / "checks"


def _path(uri: str) -> Path:
    return checks_dir() / f"{hashlib.sha256(uri.encode()).hexdigest()[:32]}.json"


def forget(uri: str) -> None:
    """Drop what was kept for `uri` (its environment no longer loads: an old tier would mislead)."""
    with contextlib.suppress(OSError):
        _path(uri).unlink(missing_ok=True)


def remember(report: TierReport, *, samples: int = DEFAULT_SAMPLES, margin: float = DEFAULT_MARGIN) -> Path | None:
    """Keep `report`'s tier under the environment's canonical URI (its manifest's); None when nothing was kept.

    `samples` and `margin` are what the check was asked for: below the defaults nothing is kept. An
    environment that did not load forgets its record. A cache that cannot be written (read-only home,
    full disk) costs the listing a column, not the check.
    """
    if report.manifest is None:
        forget(report.uri)
        return None
    if samples < DEFAULT_SAMPLES or margin < DEFAULT_MARGIN:
        return None
    record = {
        "uri": report.manifest.uri,
        "tier": report.tier.label,
        "checked": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "samples": report.samples,
        "seed": report.seed,
        "margin": margin,
        "manifest_digest": serde.digest(report.manifest),
        "versions": _used_versions(report.uri),
    }
    target = _path(report.manifest.uri)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
        partial.write_bytes(orjson.dumps(record))
        partial.replace(target)
    except OSError:
        return None
    return target


def _used_versions(uri: str) -> dict[str, str]:
    """The versions of the nenyax distributions a check of `uri` ran: core, and its adapter's distribution."""
    installed = nenyax_versions()
    used = {"nenyax-core"}
    with contextlib.suppress(NenyaxError):  # an adapter that no longer resolves: core's version alone
        distribution = default_registry().get("adapter", uri.partition(":")[0]).distribution
        if distribution:
            used.add(distribution)
    return {name: version for name, version in installed.items() if name in used}


def _current(recorded: dict[str, str], installed: dict[str, str]) -> bool:
    """Every distribution that measured it is installed at the same version (others may come and go)."""
    return bool(recorded) and all(installed.get(name) == version for name, version in recorded.items())


def recall(uri: str, versions: dict[str, str] | None = None) -> CachedTier | None:
    """The last tier measured for `uri`, or None if none was (or its record cannot be read)."""
    try:
        record = orjson.loads(_path(uri).read_bytes())
        tier = next(t for t in Tier if t.label == record["tier"])
        return CachedTier(
            uri=record["uri"],
            tier=tier,
            checked=str(record["checked"]),
            samples=int(record["samples"]),
            seed=int(record["seed"]),
            current=_current(
                dict(record.get("versions") or {}), versions if versions is not None else nenyax_versions()
            ),
        )
    except (OSError, ValueError, KeyError, TypeError, StopIteration):
        return None
