"""Discovering installed plugins lazily, attributing each to its distribution, resolving factories.

Environment variables:

* ``NENYAX_STRICT_PLUGINS=1``: a plugin that fails to load raises instead of being reported.
* ``NENYAX_DISABLE_PLUGINS=a,b``: skip these entry points.
* ``NENYAX_DISABLE_PLUGIN_AUTOLOAD=1``: load no entry points at all.
"""

from __future__ import annotations

import base64
import functools
import importlib
import importlib.metadata as md
import inspect
import os
import pickle
import types
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
import pluggy

from nenyax.core import hookspecs
from nenyax.core.errors import (
    DuplicatePluginError,
    ManifestError,
    NenyaxError,
    PluginLoadError,
    UnknownPluginError,
    UsageError,
    did_you_mean,
)
from nenyax.core.hookspecs import PluginSpec
from nenyax.core.kinds import KINDS


@attrs.frozen(kw_only=True)
class Registered:
    """A plugin spec together with where it came from."""

    spec: PluginSpec
    plugin: str
    """The entry-point (pluggy plugin) name that declared it."""
    distribution: str | None
    """The installed distribution that provides it, when known."""
    version: str | None


@attrs.frozen(kw_only=True)
class LoadFailure:
    """An entry point or hook that failed; reported, and fatal only in strict mode."""

    plugin: str
    distribution: str | None
    error: str


def _strict() -> bool:
    return os.environ.get("NENYAX_STRICT_PLUGINS", "") not in ("", "0")


def _csv_env(name: str) -> set[str]:
    return {p.strip() for p in os.environ.get(name, "").split(",") if p.strip()}


class Registry:
    """Every installed plugin of every kind; entry points are loaded on the first lookup."""

    def __init__(self, sources: Iterable[tuple[str, Any, str | None, str | None]] | None = None) -> None:
        """Build a registry over explicit ``(name, module_or_object, dist, version)`` sources.

        With ``sources=None`` the installed entry points of the ``nenyax`` group are used.
        """
        self._sources = None if sources is None else list(sources)
        self._pm: pluggy.PluginManager | None = None
        self._dists: dict[str, tuple[str | None, str | None]] = {}
        self._by_kind: dict[str, dict[str, Registered]] = {}
        self._conflicts: dict[tuple[str, str], str] = {}
        self.failures: list[LoadFailure] = []

    @classmethod
    def from_plugins(cls, *plugins: tuple[str, Any] | tuple[str, Any, str | None, str | None]) -> Registry:
        """A registry over in-memory plugin objects, for tests: ``("name", module), ...``."""
        return cls([(*p, None, None)[:4] for p in plugins])

    def portable_sources(self) -> list[tuple[str, str]] | None:
        """How a fresh interpreter rebuilds this registry: None for the installed plugins, else each
        source as a module name, or as a pickled plugin object (base64; its class must be importable there).
        """
        if self._sources is None:
            return None
        return [(name, _portable(obj)) for name, obj, _dist, _version in self._sources]

    def fresh(self) -> Registry:
        """A new, not yet loaded registry over the same sources."""
        return Registry(self._sources)

    # ------------------------------------------------------------ loading

    def _fail(self, plugin: str, dist: str | None, exc: BaseException) -> None:
        failure = LoadFailure(plugin=plugin, distribution=dist, error=f"{type(exc).__name__}: {exc}")
        if _strict():
            msg = (
                f"Plugin {plugin!r} from {dist or 'an unknown distribution'} failed to load "
                f"({failure.error}); fix or uninstall it, or unset NENYAX_STRICT_PLUGINS."
            )
            raise PluginLoadError(msg) from exc
        self.failures.append(failure)

    def _entry_point_sources(self) -> list[tuple[str, Any, str | None, str | None]]:
        if os.environ.get("NENYAX_DISABLE_PLUGIN_AUTOLOAD", "") not in ("", "0"):
            return []
        disabled = _csv_env("NENYAX_DISABLE_PLUGINS")
        out: list[tuple[str, Any, str | None, str | None]] = []
        seen: set[tuple[str, str | None]] = set()  # (entry-point name, distribution)
        for ep in md.entry_points(group=hookspecs.PROJECT):
            dist = ep.dist.name if ep.dist else None
            version = ep.dist.version if ep.dist else None
            # The same distribution can be visible twice on sys.path (editable + site); load once.
            if ep.name in disabled or (ep.name, dist) in seen:
                continue
            seen.add((ep.name, dist))
            try:
                module = ep.load()
            except Exception as exc:  # noqa: BLE001 - a broken plugin must never break discovery
                self._fail(ep.name, dist, exc)
                continue
            out.append((ep.name, module, dist, version))
        return out

    def _manager(self) -> pluggy.PluginManager:
        if self._pm is None:
            pm = pluggy.PluginManager(hookspecs.PROJECT)
            pm.add_hookspecs(hookspecs)
            sources = self._entry_point_sources() if self._sources is None else self._sources
            for name, obj, dist, version in sources:
                try:
                    pm.register(obj, name=name)
                except Exception as exc:  # noqa: BLE001 - e.g. a misspelled hook; a plugin must never break discovery
                    self._fail(name, dist, exc)
                    continue
                self._dists[name] = (dist, version)
            # A hook name no spec knows (`nenyax_register_adaptors`) would be silently ignored.
            while True:
                try:
                    pm.check_pending()
                    break
                except pluggy.PluginValidationError as exc:
                    name = pm.get_name(exc.plugin) or repr(exc.plugin)
                    pm.unregister(exc.plugin)
                    self._fail(name, self._dists.pop(name, (None, None))[0], exc)
            self._pm = pm
        return self._pm

    def _load_kind(self, kind: str) -> dict[str, Registered]:
        if kind in self._by_kind:
            return self._by_kind[kind]
        pm = self._manager()
        hook = getattr(pm.hook, KINDS[kind].hook)
        found: dict[str, Registered] = {}
        for impl in hook.get_hookimpls():  # registration order: the first registered keeps a name
            dist, version = self._dists.get(impl.plugin_name, (None, None))
            try:
                result = impl.function()
                specs = _as_specs(result, kind, impl.plugin_name)
            except Exception as exc:  # noqa: BLE001 - a plugin's hook may raise anything; it must never break discovery
                self._fail(impl.plugin_name, dist, exc)
                continue
            for spec in specs:
                entry = Registered(spec=spec, plugin=impl.plugin_name, distribution=dist, version=version)
                if spec.name in found:
                    other = found[spec.name]
                    msg = (
                        f"{kind} {spec.name!r} is provided by both {_who(other)} and {_who(entry)}; "
                        f"uninstall one or set NENYAX_DISABLE_PLUGINS={entry.plugin}."
                    )
                    if _strict():
                        raise DuplicatePluginError(msg)
                    # Listed and reported, but refused on use: which one would win is not ours to guess.
                    self._conflicts[(kind, spec.name)] = msg
                    self.failures.append(LoadFailure(plugin=entry.plugin, distribution=dist, error=msg))
                    continue
                found[spec.name] = entry
        self._by_kind[kind] = found
        return found

    # ------------------------------------------------------------ queries

    def names(self, kind: str) -> list[str]:
        """Sorted names of the installed plugins of `kind`."""
        return sorted(self._load_kind(kind))

    def entries(self, kind: str) -> list[Registered]:
        """Every registered plugin of `kind`, sorted by name."""
        found = self._load_kind(kind)
        return [found[n] for n in sorted(found)]

    def all_entries(self) -> list[Registered]:
        """Every registered plugin of every kind."""
        return [e for kind in KINDS for e in self.entries(kind)]

    def get(self, kind: str, name: str) -> Registered:
        """The registered plugin of `kind` called `name`, or an error suggesting close names."""
        if kind not in KINDS:
            msg = f"Unknown plugin kind {kind!r}." + did_you_mean(kind, KINDS, "plugin kind")
            raise UnknownPluginError(msg)
        found = self._load_kind(kind)
        if (kind, name) in self._conflicts:
            raise DuplicatePluginError(self._conflicts[(kind, name)])
        if name not in found:
            msg = f"No {kind} named {name!r} is installed." + did_you_mean(name, found, kind)
            failed = [f.plugin for f in self.failures]
            if failed:
                msg += f" (These plugins failed to load: {', '.join(failed)}; see `nenyax plugins`.)"
            raise UnknownPluginError(msg)
        return found[name]

    def factory(self, kind: str, name: str) -> Any:
        """Import the factory of plugin `name` of `kind` without calling it (the heavy step)."""
        entry = self.get(kind, name)
        try:
            return import_factory(entry.spec.factory)
        except Exception as exc:  # ImportError, a missing attribute, or an import that raises
            msg = (
                f"The {kind} {name!r} ({_who(entry)}) could not be imported: {exc}. Reinstall it with its dependencies."
            )
            raise PluginLoadError(msg) from exc

    def create(self, kind: str, name: str, **options: Any) -> Any:
        """Import and call the factory of plugin `name` of `kind` as ``factory(**options)``.

        The options are bound to the factory's signature first (`FACTORY_CONVENTION`): an unknown
        option, or a required one missing, is one `UsageError` sentence naming the options it takes.
        """
        factory = self.factory(kind, name)
        problem = option_problem(factory, options)
        if problem:
            msg = f"The {kind} {name!r} {problem}"
            raise UsageError(msg)
        try:
            return factory(**options)
        except NenyaxError:
            raise
        except Exception as exc:  # e.g. a provider that needs a GPU it cannot find
            entry = self.get(kind, name)
            msg = f"The {kind} {name!r} ({_who(entry)}) failed to start: {type(exc).__name__}: {exc}."
            raise PluginLoadError(msg) from exc


def factory_options(factory: Any) -> tuple[list[str], bool] | None:
    """The options `factory` takes by keyword, and whether it takes any (``**options``); None when its
    signature cannot be read (a builtin)."""
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return None
    named = [
        p.name
        for p in signature.parameters.values()
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    ]
    return named, any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values())


def option_problem(factory: Any, options: Mapping[str, Any]) -> str | None:
    """Why ``factory(**options)`` cannot be called (the end of a sentence), or None when it can."""
    taken = factory_options(factory)
    if taken is None:
        return None
    named, any_option = taken
    takes = f"it takes {', '.join(named)}" if named else "it takes none"
    unknown = sorted(set(options) - set(named))
    if unknown and not any_option:
        return f"takes no option {', '.join(map(repr, unknown))}; {takes}."
    try:
        inspect.signature(factory).bind(**options)
    except TypeError as exc:
        return f"cannot be built with the options {sorted(options)} ({exc}); {takes}."
    return None


def _portable(obj: Any) -> str:
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    return "pickle:" + base64.b64encode(pickle.dumps(obj)).decode()


def from_portable(sources: list[tuple[str, str]]) -> Registry:
    """The registry `portable_sources` described (unpickling imports each plugin object's class)."""
    built = []
    for name, ref in sources:
        if ref.startswith("pickle:"):
            obj = pickle.loads(base64.b64decode(ref.removeprefix("pickle:")))
        else:
            obj = importlib.import_module(ref)
        built.append((name, obj, None, None))
    return Registry(built)


def import_factory(ref: str) -> Any:
    """Resolve ``"pkg.module:Attr.sub"`` to the object it names."""
    module_name, _, attr_path = ref.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in attr_path.split("."):
        obj = getattr(obj, part)
    return obj


def _who(entry: Registered) -> str:
    if entry.distribution:
        return f"{entry.distribution} {entry.version or ''}".strip()
    return f"plugin {entry.plugin!r}"


def _as_specs(result: Any, kind: str, plugin: str) -> Sequence[PluginSpec]:
    specs = [result] if isinstance(result, PluginSpec) else list(result or ())
    for spec in specs:
        if not isinstance(spec, PluginSpec):
            msg = f"Plugin {plugin!r} returned {type(spec).__name__}, not a PluginSpec, from its {kind} hook."
            raise ManifestError(msg)
        if spec.kind != kind:
            msg = f"Plugin {plugin!r} returned a {spec.kind} spec ({spec.name!r}) from its {kind} hook."
            raise ManifestError(msg)
    return specs


@functools.cache
def default_registry() -> Registry:
    """The process-wide registry over installed entry points (built on first use)."""
    return Registry()
