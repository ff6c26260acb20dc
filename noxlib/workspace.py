"""The distributions under packages/ and what each declares for nox in its pyproject's `[tool.nenyax]`.

A distribution classified `Private :: Do Not Upload` (nenyax-testsupport) is tooling of this repository, not a
product: it is tested and installed like the others, but `published()` leaves it out of the built wheels.

The keys (all optional):

- `debian`: Debian packages its tests need (a sandbox's binary), installed when missing and we can.
- `nodeps`: requirements wanted for their files only, installed without their dependencies.
- `shared` (default true): false leaves it out of `tests(package=...)`, its test group out of `integration`
  and itself out of `bench`; its own `sessions` (or a session of noxfile.py's, `podman`) test it.
- `[tool.nenyax.server-venv]`: `python`, `requires`, `env`: a cached venv of another Python holding an
  upstream server its tests start; `env` names the variable that points them at its python. `python-version`
  (optional) resolves `requires` as if for that Python (an upstream release whose Requires-Python asks for a
  patch release newer than the one installed here).
- `[tool.nenyax.sessions.<name>]`: a session of its own (in nox's default list), running its tests with its
  test group changed: `about` (the session's docstring), `python` (default 3.11), `drop` (names taken out of
  the test group), `requires` (added to it; first-party names install from source), `env` (variables set
  for pytest), `pytest` (arguments before the session's own), `server-venv` (replaces the package's
  `[tool.nenyax.server-venv]` for this session: another version of the upstream server), `python-version`
  (resolves the requirements as if for that Python, as the server venv's key does).
- `integration` (default true): false leaves it out of `integration` (its dependencies cannot be resolved
  with the shared test groups there).
- `beside` and `[tool.nenyax.cannot-share]`: what a user installs beside it, and the distributions it cannot
  share an environment with (the `together` session; noxlib/together.py).
- `together-test`: one test of its suite that plays an episode, run in the `together` session with every
  distribution installed (it may not skip there).
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {p.parent.name: p.parent for p in sorted(ROOT.glob("packages/*/pyproject.toml"))}
PYTHON = "3.11"
# The trove classifier PyPI refuses to upload: a distribution carrying it is tooling of this repository.
PRIVATE = "Private :: Do Not Upload"


@functools.cache
def pyproject(package: str) -> dict[str, Any]:
    """A distribution's pyproject.toml, parsed."""
    return tomllib.loads((PACKAGES[package] / "pyproject.toml").read_text())


def declared(package: str) -> dict[str, Any]:
    """A distribution's `[tool.nenyax]` table (empty when it has none)."""
    return pyproject(package).get("tool", {}).get("nenyax", {})


def name(requirement: str) -> str:
    """The distribution a requirement names, without version, extras or markers."""
    return requirement.split(">")[0].split("<")[0].split("=")[0].split("[")[0].split(";")[0].strip()


def first_party(requirements: Iterable[str]) -> list[str]:
    """The requirements that name a distribution of this workspace (installed from source)."""
    return [name(r) for r in requirements if name(r) in PACKAGES]


def third_party(requirements: Iterable[str]) -> list[str]:
    """The requirements that do not name a distribution of this workspace."""
    return [r for r in requirements if name(r) not in PACKAGES]


def closure(packages: Iterable[str]) -> set[str]:
    """`packages` and every first-party distribution they depend on."""
    seen: set[str] = set()
    todo = list(packages)
    while todo:
        package = todo.pop()
        if package not in seen:
            seen.add(package)
            todo += first_party(pyproject(package)["project"].get("dependencies", []))
    return seen


def requirements(packages: Iterable[str]) -> list[str]:
    """The third-party requirements `packages` declare, deduplicated."""
    return sorted({r for p in packages for r in third_party(pyproject(p)["project"].get("dependencies", []))})


def test_group(package: str) -> list[str]:
    """A distribution's `test` dependency group."""
    return pyproject(package).get("dependency-groups", {}).get("test", ["pytest"])


def debian(packages: Iterable[str]) -> list[str]:
    """The Debian packages `packages` declare for their tests."""
    return sorted({d for p in packages for d in declared(p).get("debian", [])})


def nodeps(packages: Iterable[str]) -> list[str]:
    """The requirements `packages` want without their dependencies (`nodeps`)."""
    return sorted({d for p in packages for d in declared(p).get("nodeps", [])})


def shared() -> list[str]:
    """The distributions tested by `tests(package=...)`, their test groups installed in `integration`."""
    return [p for p in PACKAGES if declared(p).get("shared", True)]


def published() -> list[str]:
    """The distributions that are products: every one but those classified ``Private :: Do Not Upload``
    (nenyax-testsupport, the helpers only this repository's tests use), which no wheel session builds."""
    return [p for p in PACKAGES if PRIVATE not in pyproject(p)["project"].get("classifiers", [])]


def shared_test_groups() -> list[str]:
    """The third-party test requirements of every shared distribution."""
    return third_party(r for p in shared() for r in test_group(p))


@dataclass(frozen=True)
class Lane:
    """One way to run a distribution's own tests: `tests(package=...)`'s, or a session of its own."""

    package: str
    name: str = "tests"
    about: str = "One distribution's own tests, with only its declared dependencies (plus local siblings)."
    python: str = PYTHON
    drop: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    pytest: tuple[str, ...] = ()
    server_venv: dict[str, Any] | None = None
    """Replaces the package's `[tool.nenyax.server-venv]` for this lane."""
    python_version: str | None = None
    """Resolve the requirements as if for this Python (a release asking for a newer patch release than installed)."""
    engine: str | None = None
    """``podman``: the tests run beside a private podman engine (noxlib/podman.py), its variables in their env."""

    @property
    def group(self) -> list[str]:
        """The package's test group, less `drop`, plus `requires`."""
        return [r for r in test_group(self.package) if name(r) not in self.drop] + list(self.requires)

    @property
    def siblings(self) -> list[str]:
        """The first-party distributions the lane's group names (installed from source)."""
        return first_party(self.group)


def own_lanes() -> list[Lane]:
    """Every `[tool.nenyax.sessions.<name>]`, in package order."""
    lanes = []
    for package in PACKAGES:
        for lane_name, spec in declared(package).get("sessions", {}).items():
            known = {"about", "python", "python-version", "drop", "requires", "env", "pytest", "server-venv", "engine"}
            unknown = set(spec) - known
            if unknown:
                raise ValueError(f"{package}'s [tool.nenyax.sessions.{lane_name}] has unknown keys: {sorted(unknown)}.")
            lists = {key: tuple(spec[key]) for key in ("drop", "requires", "pytest") if key in spec}
            python, env, server_venv = spec.get("python", PYTHON), spec.get("env", {}), spec.get("server-venv")
            lanes.append(
                Lane(
                    package,
                    lane_name,
                    spec["about"],
                    python,
                    env=env,
                    server_venv=server_venv,
                    python_version=spec.get("python-version"),
                    engine=spec.get("engine"),
                    **lists,
                )
            )
    return lanes
