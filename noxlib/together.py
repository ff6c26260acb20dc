"""Every distribution in one environment, with the format library a user installs beside each.

Users install several Nenyax distributions together, and each brings its format's library; two of those may
not share an environment (their requirements cannot be resolved together, or one's pin breaks the other's
imports). What can share one is tested together (the `together` session); what cannot is declared, each pair
with its reason, in one of the two distributions' pyproject:

- `beside`: the requirements a user installs beside the distribution to use it, when they are not its
  dependencies (verifiers beside the verifiers adapter).
- `[tool.nenyax.cannot-share]`: `"<other distribution>" = "<why, one sentence>"`, a pair that cannot share an
  environment on some Python; the other side is left out of the shared environment.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable
from dataclasses import dataclass

from noxlib import workspace


def beside(package: str) -> list[str]:
    """What a user installs beside `package` to use it (its `beside` key)."""
    return list(workspace.declared(package).get("beside", []))


def requirements(package: str) -> list[str]:
    """The third-party requirements of `package`, its first-party closure and what goes beside each."""
    local = workspace.closure([package])
    return sorted({*workspace.requirements(local), *(r for p in local for r in beside(p))})


@dataclass(frozen=True)
class Pair:
    """Two distributions that cannot share an environment, and why (declared on `declared_by`)."""

    declared_by: str
    other: str
    why: str


def pairs(packages: Iterable[str]) -> list[Pair]:
    """Every `[tool.nenyax.cannot-share]` pair among `packages`."""
    wanted = set(packages)
    found = []
    for package in sorted(wanted):
        for other, why in workspace.declared(package).get("cannot-share", {}).items():
            if other not in workspace.PACKAGES:
                raise ValueError(f"{package}'s [tool.nenyax.cannot-share] names {other!r}, which is no distribution.")
            if other in wanted:
                found.append(Pair(package, other, why))
    return found


def sharing(packages: Iterable[str]) -> list[str]:
    """`packages` less the `other` side of every declared pair: what one environment holds."""
    left_out = {pair.other for pair in pairs(packages)}
    return sorted(set(packages) - left_out)


def resolves(python: str, reqs: Iterable[str], constraints: list[str]) -> tuple[bool, str]:
    """Whether uv resolves `reqs` together for `python` (a version), and uv's last words when it does not."""
    asked = ["uv", "pip", "compile", "-q", "--python-version", python, "-", "-o", "/dev/null", *constraints]
    done = subprocess.run(asked, input="\n".join(reqs), text=True, capture_output=True, check=False)
    return done.returncode == 0, done.stderr.strip()
