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

One factory convention, for every kind (`nenyax.core.kinds.FACTORY_CONVENTION`)::

    factory(**options) -> instance

``options`` are the keyword settings the user gave the plugin (nothing when none were given, so
``factory()`` builds the default instance). A factory takes each option as a keyword parameter with a
default; the registry binds the options to its signature first and refuses an unknown one in one
sentence naming those it takes. A kind's standard options (``Kind.options``: a provider's
``base_url`` and ``api_key``) are accepted by every factory of that kind. The instance implements the
kind's interface (``Kind.interface``) and, for each optional capability it declares in its
``capabilities`` attribute, that capability's protocol (``Kind.capabilities``). What a plugin needs at
run time reaches it through its interface's methods (an adapter's ``load(uri, context)``), never
through the factory.

Call semantics, for every hook:

* called with no arguments;
* called at most once per registry, the first time a plugin of that kind is looked up;
* collect-all: never ``firstresult``, never ``historic``; the registry rejects two specs of the
  same kind and name, naming both distributions;
* must be cheap and free of side effects: no I/O, no network, no heavy imports, no event loop.

Conformance: every kind has a kit (``Kind.kit``, its checks in ``nenyax.testing.checks.<kind>``):
``nenyax <kind>-check NAME`` runs them, the common ones every kind shares first; a plugin's tests run
the same kit with ``nenyax.testing.AdapterConformance`` (adapters) or ``conformance_suite("<kind>")``.
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
    """``"pkg.module:Attr"``; ``Attr(**options)`` returns an object of the kind's interface (`FACTORY_CONVENTION`)."""
    summary: str = ""
    """One line shown by ``nenyax plugins``."""


SpecResult = PluginSpec | Sequence[PluginSpec]

# ---------------------------------------------------------------- adapters


@hookspec
def nenyax_register_adapters() -> SpecResult:  # type: ignore[empty-body]
    """Declare the environment formats this plugin loads.

    The spec's ``name`` is the URI scheme: ``load("NAME:rest?k=v")`` routes to this adapter.
    The factory, ``factory(**options)`` (the loader gives none; a URI's own options reach ``load``),
    returns a `nenyax.core.plugins.adapter.Adapter`:
    ``load(uri: EnvURI, context: LoadContext) -> Environment`` (the context carries the registry,
    so the adapter finds its judges and sandboxes without a global; raise `BadURIError` with a
    one-sentence message for a URI it cannot serve) and ``examples() -> Sequence[str]`` (URIs
    that load here, used by the conformance kit and in suggestions). The environment is a
    `StepEnvironment`, `RolloutEnvironment` or `TaskEnvironment`: its mode is fixed by the format.

    Conformance: ``nenyax adapter-check NAME`` / `nenyax.testing.AdapterConformance`.
    """


# ---------------------------------------------------------------- providers


@hookspec
def nenyax_register_providers() -> SpecResult:  # type: ignore[empty-body]
    """Declare the model transports this plugin provides (the part before ``:`` in ``openai:MODEL``).

    The factory, ``factory(base_url=..., api_key=..., **options)``, gets the Endpoint's ``base_url`` and
    ``api_key`` when the user set them (every provider accepts both; an in-process one ignores them)
    and the Endpoint's ``provider_options`` as its other options. It returns a
    `nenyax.core.plugins.provider.Provider`: an async
    ``complete(ChatRequest) -> ModelCall`` that records the response and, when the transport can
    tell, prompt/completion token ids and per-token logprobs, plus ``aclose()``.

    Network and server faults (after the provider's own retries) raise `InfraFailure`, so the
    episode is ``infra_error`` and never scored 0; what retrying cannot fix raises `UsageError`.

    Conformance: ``nenyax provider-check NAME`` / ``nenyax.testing.conformance_suite("provider")``.
    """


# ---------------------------------------------------------------- judges


@hookspec
def nenyax_register_judges() -> SpecResult:  # type: ignore[empty-body]
    """Declare judges, picked by name (``?judge=NAME``, ``use = "NAME"``).

    The factory, ``factory(**options)`` (from the URI's ``judge.<key>`` values or a config table),
    returns a `nenyax.core.plugins.judge.Judge`: an object whose ``capabilities``
    (`JudgeCapabilities`) declare what it judges, ``answer`` (it has ``judge(answer: str, reference)
    -> Judgment``), ``trajectory`` (``judge_trajectory(trajectory, reference) -> Judgment``), or both.
    A caller asks for the capability it needs and is refused in one sentence by a judge without it.
    A judge that cannot decide raises `VerifierFailure`; it never returns a made-up 0.

    Conformance: ``nenyax judge-check NAME`` / ``nenyax.testing.conformance_suite("judge")``.
    """


# ---------------------------------------------------------------- sandboxes


@hookspec
def nenyax_register_sandboxes() -> SpecResult:  # type: ignore[empty-body]
    """Declare sandbox backends that run task-mode commands in isolation.

    The factory, ``factory(**options)``, returns a `nenyax.core.plugins.sandbox.Sandbox`: ``capabilities``,
    ``build(SandboxSpec) -> SandboxImage`` (with a digest), ``start(image, proxy=None) -> SandboxHandle``,
    ``remove(image)`` and ``close()``. A handle is an async context manager with
    ``exec(argv | shell, cwd, env, timeout, user, on_output, max_output) -> ExecResult`` (each stream
    bounded, ``truncated`` said), ``put``/``get`` (files and directories), ``stop``, the ``proxy_url``
    commands inside reach the proxy at, and the limits it could not enforce (``unenforced``). A non-zero
    exit is data; the backend failing raises `InfraFailure`. Every capability it claims is proven by its
    conformance kit, ``nenyax sandbox-check NAME`` (containment included: writes outside its files, the
    network, a fork bomb, a memory hog, a command past its timeout) / ``conformance_suite("sandbox")``.
    """


# ---------------------------------------------------------------- learners


@hookspec
def nenyax_register_learners() -> SpecResult:  # type: ignore[empty-body]
    """Declare learners that improve a policy (``nenyax train --learner NAME``).

    The factory, ``factory(model=..., **options)`` (`model`: the ``provider:model`` the user named, None
    for the learner's default; the other options from the run config's ``[learner]`` table), returns a
    `nenyax.core.plugins.learner.Learner`: ``policy()`` (a Policy whose info carries the revision),
    ``update(groups)`` (only trainable trajectories reach it), ``save(directory) -> revision``,
    ``restore(revision)`` (in a fresh process too) and ``close()``.

    Conformance: ``nenyax learner-check NAME`` / ``nenyax.testing.conformance_suite("learner")``.
    """


# ---------------------------------------------------------------- exporters


@hookspec
def nenyax_register_exporters() -> SpecResult:  # type: ignore[empty-body]
    """Declare exporters: writers of row streams (``nenyax export --to NAME``).

    The factory, ``factory(**options)``, returns a `nenyax.core.plugins.exporter.Exporter`: its
    ``suffix`` names default destinations, ``open(destination, schema=)`` -> a ``RowWriter`` with
    ``write_batch(rows)``, ``close()`` (the rows appear at the destination whole) and ``abort()``.
    The rows themselves (raw, SFT, DPO) and their `RowSchema` are made once in `nenyax.core.contract.rows`.

    Conformance: ``nenyax exporter-check NAME`` / ``nenyax.testing.conformance_suite("exporter")``.
    """


# ---------------------------------------------------------------- tracers


@hookspec
def nenyax_register_tracers() -> SpecResult:  # type: ignore[empty-body]
    """Declare tracer presets that send core's OpenTelemetry GenAI spans to a backend (``--trace NAME``).

    Core emits the spans through ``opentelemetry-api`` only (`nenyax.core.engine.tracing.GenAISpans`) and
    never sets the global provider. The factory, ``factory(**options)`` (no options: the preset reads its
    endpoint and keys from environment variables), returns a `nenyax.core.plugins.tracer.Tracer`:
    ``tracer_provider`` (an SDK ``TracerProvider`` configured for the backend, which the caller hands to
    ``GenAISpans``), ``flush(timeout)`` and ``shutdown() -> TraceDelivery`` (spans sent and lost, never
    raising). A preset whose key variable is unset raises a `UsageError` naming that variable; a key is
    never written into a span or a resource attribute.

    Conformance: ``nenyax tracer-check NAME`` / ``nenyax.testing.conformance_suite("tracer")``.
    """
