"""The conformance checks every plugin kind shares, written once: `common_checks(kind)` gives them ids
``<kind>/<check>``. Each yields one sentence per problem found.

They prove the declaration (valid, lazy, from a distribution whose entry point is named after it, one
that ships no ``nenyax/__init__.py``) and the factory (it imports, follows `FACTORY_CONVENTION`, and
returns the kind's interface with the methods of every capability it declares).
"""

from __future__ import annotations

import functools
import importlib.metadata as md
import importlib.util
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from nenyax.core.errors import NenyaxError
from nenyax.core.kinds import FACTORY_CONVENTION, KINDS
from nenyax.core.plugins.interfaces import missing
from nenyax.core.plugins.registry import factory_options, import_factory, option_problem
from nenyax.testing.report import Check, Finding, Severity, Skip
from nenyax.testing.subject import Subject

_LAZY_PROBE = """
import json, sys
from nenyax.core.plugins.registry import Registry
entry = Registry().get({kind!r}, {name!r})
module = entry.spec.factory.partition(":")[0]
print(json.dumps({{"imported": module in sys.modules, "module": module}}))
"""


def declaration_is_valid(subject: Subject) -> Iterator[str | Finding]:
    """The plugin's hook declares it (a valid `PluginSpec` of this kind), its plugin loaded without failures."""
    try:
        entry = subject.entry
    except NenyaxError as exc:  # an invalid spec, a hook that raised: the registry says which
        yield f"The {subject.kind} {subject.name!r} is not declared by any loaded plugin: {exc}"
        for failure in subject.registry.failures:
            yield f"Plugin {failure.plugin!r} failed to load: {failure.error}"
        return
    for failure in subject.registry.failures:
        if failure.plugin == entry.plugin:
            yield f"Plugin {entry.plugin!r} also failed to load a declaration: {failure.error}"
    if not entry.spec.summary:
        yield Finding(
            check=f"{subject.kind}/declaration-is-valid",
            message="The PluginSpec has no summary; give one line for `nenyax plugins`.",
            severity=Severity.WARNING,
        )


def registration_is_lazy(subject: Subject) -> Iterator[str]:
    """Discovery does not import the factory's module (so `nenyax --help` stays fast)."""
    if subject.installed:
        # Authoritative: a fresh interpreter, where nothing else imported the module first.
        probe = _LAZY_PROBE.format(kind=subject.kind, name=subject.name)
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False)
        if done.returncode != 0:
            yield f"Discovering plugins in a fresh interpreter failed: {done.stderr.strip().splitlines()[-1:]}"
            return
        result = json.loads(done.stdout.strip().splitlines()[-1])
        imported, module = result["imported"], result["module"]
    else:
        # In-process: only meaningful when nothing imported the module before discovery ran.
        before = set(sys.modules)
        module = subject.registry.fresh().get(subject.kind, subject.name).spec.factory.partition(":")[0]
        imported = module not in before and module in sys.modules
    if imported:
        yield f"Discovery imported {module!r}; a plugin module must only return PluginSpecs with lazy factory strings."


def factory_importable(subject: Subject) -> Iterator[str | Finding]:
    """The spec's factory string imports, and the plugin is attributed to a distribution."""
    entry = subject.entry
    try:
        factory = import_factory(entry.spec.factory)
    except Exception as exc:  # noqa: BLE001 - importing runs the plugin's code: whatever fails is the finding
        yield f"The factory {entry.spec.factory!r} does not import: {type(exc).__name__}: {exc}."
        return
    if not callable(factory):
        yield f"The factory {entry.spec.factory!r} is not callable."
    if subject.installed and not entry.distribution:
        yield Finding(
            check=f"{subject.kind}/factory-importable",
            message="The plugin is not attributed to an installed distribution; install it with pip.",
            severity=Severity.WARNING,
        )


def factory_takes_options(subject: Subject) -> Iterator[str]:
    """The factory is called as ``factory(**options)``: no option is required, the kind's standard ones are taken."""
    factory = subject.registry.factory(subject.kind, subject.name)
    taken = factory_options(factory)
    if taken is None:
        raise Skip("the factory's signature cannot be read (a builtin)")
    named, any_option = taken
    problem = option_problem(factory, {})
    if problem:
        yield f"The factory must build a default instance as factory() ({FACTORY_CONVENTION}), but it {problem}"
    for option in KINDS[subject.kind].options:
        if option not in named and not any_option:
            yield f"The factory does not take {option!r}, an option every {subject.kind} is given."
    problem = option_problem(factory, subject.options)
    if subject.options and problem:
        yield f"The factory {problem}"


def factory_returns_instance(subject: Subject) -> Iterator[str]:
    """The factory returns the kind's interface, with the methods of every capability it declares."""
    problem = missing(subject.kind, subject.instance())
    if problem:
        yield f"The factory's instance {problem}."


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def entry_point_named_after_distribution(subject: Subject) -> Iterator[str]:
    """The entry point is the distribution's name without ``nenyax-`` (``adapters-gymnasium``, ``acme``)."""
    entry = subject.entry
    if not entry.distribution:
        raise Skip("the plugin comes from no installed distribution (an in-memory registry)")
    expected = _canonical(entry.distribution).removeprefix("nenyax-")
    if _canonical(entry.plugin) != expected:
        yield (
            f"The entry point is named {entry.plugin!r}; name it {expected!r} after the distribution "
            f"{entry.distribution} ([project.entry-points.nenyax] {expected} = ...)."
        )


@functools.cache
def _shipped_files(distribution: str) -> tuple[str, ...]:
    try:
        files = md.distribution(distribution).files or []
    except md.PackageNotFoundError:
        return ()
    return tuple(str(f).replace("\\", "/") for f in files)


def _namespace_inits(distribution: str | None) -> tuple[str, ...]:
    """``nenyax/__init__.py``, and ``nenyax/<area>/__init__.py`` for a ``nenyax-<area>-<name>`` distribution."""
    paths = ["nenyax/__init__.py"]
    parts = _canonical(distribution or "").split("-")
    if len(parts) >= 3 and parts[0] == "nenyax":
        paths.append(f"nenyax/{parts[1]}/__init__.py")
    return tuple(paths)


def no_namespace_init(subject: Subject) -> Iterator[str]:
    """The distribution ships no ``nenyax/__init__.py`` (nor ``nenyax/<area>/__init__.py``): they are namespaces."""
    entry = subject.entry
    forbidden = _namespace_inits(entry.distribution)
    shipped = _shipped_files(entry.distribution) if entry.distribution else ()
    if any(f.startswith("nenyax/") for f in shipped):  # a wheel install lists what it put in place
        found = [f for f in forbidden if f in shipped]
    else:  # an editable install, or an in-memory plugin: look at the source tree the factory comes from
        module = entry.spec.factory.partition(":")[0]
        if module.split(".")[0] != "nenyax":
            raise Skip(f"the factory's module {module!r} is not under nenyax/ and no distribution lists its files")
        try:
            spec = importlib.util.find_spec(module)
        except ImportError:
            spec = None
        if spec is None or not spec.origin:
            raise Skip(f"the source of {module!r} cannot be found (see {subject.kind}/factory-importable)")
        # The folder holding nenyax/: up one level per dot, and one more from a package's __init__.py.
        root = Path(spec.origin).parents[module.count(".") + (1 if spec.submodule_search_locations else 0)]
        found = [f for f in forbidden if (root / f).exists()]
    for path in found:
        yield f"{entry.distribution or 'The plugin'} ships {path}; delete it (nenyax/ and its areas are namespaces)."


def common_checks(kind: str) -> tuple[Check, ...]:
    """The checks every `kind` plugin must pass, with ids ``<kind>/<check>``, in the order they run."""
    return (
        # First: later checks import the implementation, after which laziness cannot be observed in-process.
        Check(id=f"{kind}/registration-is-lazy", summary="discovery imports nothing heavy", run=registration_is_lazy),
        Check(
            id=f"{kind}/declaration-is-valid", summary="the plugin declares itself validly", run=declaration_is_valid
        ),
        Check(
            id=f"{kind}/entry-point-named-after-distribution",
            summary="the entry point is named after the distribution",
            run=entry_point_named_after_distribution,
        ),
        Check(id=f"{kind}/no-namespace-init", summary="no nenyax/__init__.py shipped", run=no_namespace_init),
        Check(id=f"{kind}/factory-importable", summary="the factory string imports", run=factory_importable),
        Check(
            id=f"{kind}/factory-takes-options",
            summary="the factory is called as factory(**options)",
            run=factory_takes_options,
        ),
        Check(
            id=f"{kind}/factory-returns-{kind}",
            summary=f"the factory returns {_article(kind)} {kind} with its declared capabilities",
            run=factory_returns_instance,
        ),
    )


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"
