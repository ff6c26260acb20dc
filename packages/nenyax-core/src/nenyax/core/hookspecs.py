"""The plugin specification: seven registration hooks, one per plugin kind.

How registration works
----------------------
A distribution declares an entry point in the ``nenyax`` group whose value is a *module of
hookimpls* (conventionally ``<package>.plugin``)::

    [project.entry-points.nenyax]
    adapters-reasoning-gym = "nenyax.adapters.reasoning_gym.plugin"

The entry point's name is the pluggy plugin name: distribution name without the ``nenyax-`` prefix
for first-party plugins (``adapters-reasoning-gym``), the bare name for third parties (``acme``).

The module implements any of the hooks below with ``@nenyax.core.hookimpl``. Each hook returns a
`PluginSpec` or a sequence of them. A spec is pure data: its ``factory`` is an import string
(``"pkg.module:Attr"``) that is imported only when the plugin is first *used*, so that discovery
(``nenyax --help``, ``nenyax plugins``) never imports a heavy dependency.

Call semantics, for every hook:

* called with no arguments (arguments may be added later; pluggy passes only those an
  implementation names, so adding one never breaks an existing plugin);
* called at most once per registry, the first time a plugin of that kind is looked up;
* collect-all: never ``firstresult``, never ``historic``; the registry rejects two specs of the
  same kind and name, naming both distributions;
* must be cheap and free of side effects: no I/O, no network, no heavy imports, no event loop.

Conformance: ``nenyax <kind>-check NAME`` runs the kit's checks for that kind; plugin tests
subclass the matching base class in ``nenyax.testing`` (e.g. ``AdapterConformance``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import attrs
import pluggy

from nenyax.core.errors import ManifestError
from nenyax.core.kinds import KINDS

PROJECT = "nenyax"
"""The pluggy project name, and the entry-point group."""

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

_FACTORY = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")


def _check_kind(_inst: object, _attr: attrs.Attribute[str], value: str) -> None:
    if value not in KINDS:
        msg = f"Plugin kind {value!r} is not one of {', '.join(KINDS)}."
        raise ManifestError(msg)


def _check_name(_inst: object, _attr: attrs.Attribute[str], value: str) -> None:
    if not _NAME.match(value):
        msg = f"Plugin name {value!r} must be lower-case letters, digits, '_' or '-', starting with a letter."
        raise ManifestError(msg)


def _check_factory(_inst: object, _attr: attrs.Attribute[str], value: str) -> None:
    if not _FACTORY.match(value):
        msg = f"Plugin factory {value!r} must be an import string like 'package.module:Attr'."
        raise ManifestError(msg)


@attrs.frozen(kw_only=True)
class PluginSpec:
    """A plugin's declaration: what kind, which name, and where its factory lives (lazily)."""

    kind: str = attrs.field(validator=_check_kind)
    """One of the seven kinds in `nenyax.core.kinds.KINDS`."""
    name: str = attrs.field(validator=_check_name)
    """Unique among installed plugins of this kind; how users pick it (``use = "acme"``)."""
    factory: str = attrs.field(validator=_check_factory)
    """``"pkg.module:Attr"``; calling ``Attr()`` returns an object of the kind's interface."""
    summary: str = ""
    """One line shown by ``nenyax plugins``."""


SpecResult = PluginSpec | Sequence[PluginSpec]

# ---------------------------------------------------------------- adapters


@hookspec
def nenyax_register_adapters() -> SpecResult:  # type: ignore[empty-body]
    """Declare the environment formats this plugin loads.

    The spec's ``name`` is the URI scheme: ``load("NAME:rest?k=v")`` routes to this adapter.
    The factory returns an object with the `nenyax.core.interfaces.Adapter` interface:
    ``load(uri: EnvURI) -> Environment`` (raise `BadURIError` with a one-sentence message for a
    URI it cannot serve) and ``examples() -> Sequence[str]`` (a few URIs that work offline, used
    by the conformance kit and in suggestions).

    Conformance: ``nenyax adapter-check NAME`` / `nenyax.testing.AdapterConformance`.
    """


# ---------------------------------------------------------------- providers


@hookspec
def nenyax_register_providers() -> SpecResult:  # type: ignore[empty-body]
    """Declare the model transports this plugin provides (the part before ``:`` in ``openai:MODEL``).

    Unlike other kinds, the factory is called with keyword options from the Endpoint
    (``base_url``, ``api_key``, ``timeout``, ``max_retries`` and provider-specific ones; ignore
    what you do not use) and returns a `nenyax.core.interfaces.Provider`: an async
    ``complete(ChatRequest) -> ModelCall`` that records the response and, when the transport can
    tell, prompt/completion token ids and per-token logprobs, plus ``aclose()``.

    Network and server faults (after the provider's own retries) raise `InfraFailure`, so the
    episode is ``infra_error`` and never scored 0.
    """


# ---------------------------------------------------------------- judges


@hookspec
def nenyax_register_judges() -> SpecResult:  # type: ignore[empty-body]
    """Declare judges: functions from a finished episode to a `Judgment`.

    The factory returns a `nenyax.core.interfaces.Judge`: ``judge(answer: str, reference: Any) ->
    Judgment``. A judge that cannot decide raises `VerifierFailure`, never returns a made-up 0.
    """


# ---------------------------------------------------------------- sandboxes


@hookspec
def nenyax_register_sandboxes() -> SpecResult:  # type: ignore[empty-body]
    """Declare sandboxes that run commands in isolation for task-mode formats.

    The factory returns a `nenyax.core.interfaces.Sandbox`: async ``start``, ``exec`` (with a
    timeout), ``put``/``get`` files and ``stop``.
    """


# ---------------------------------------------------------------- learners


@hookspec
def nenyax_register_learners() -> SpecResult:  # type: ignore[empty-body]
    """Declare learners that improve a policy.

    The factory returns a `nenyax.core.interfaces.Learner`: ``policy()``, ``update(groups)``,
    ``save(path)`` and ``restore(path)`` (the train loop snapshots before each round and restores
    when held-out scores do not improve).
    """


# ---------------------------------------------------------------- exporters


@hookspec
def nenyax_register_exporters() -> SpecResult:  # type: ignore[empty-body]
    """Declare exporters that write trajectories somewhere in some row shape (raw, SFT, DPO).

    The factory returns a `nenyax.core.interfaces.Exporter`: ``export(trajectories, dest, shape)``.
    """


# ---------------------------------------------------------------- tracers


@hookspec
def nenyax_register_tracers() -> SpecResult:  # type: ignore[empty-body]
    """Declare tracer presets that send OpenTelemetry GenAI spans to a backend.

    The factory returns a `nenyax.core.interfaces.Tracer`: ``configure(settings)`` that installs
    span exporters on an OpenTelemetry SDK tracer provider.
    """
