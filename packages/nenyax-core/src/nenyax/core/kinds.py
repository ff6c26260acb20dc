"""The seven plugin kinds: the one table the hookspecs, registry, CLI, docs and conformance kit derive from.

Every kind follows one pattern: a registration hook returns `PluginSpec` declarations; the spec's
factory is called as ``factory(**options) -> instance`` (`FACTORY_CONVENTION`); the instance
implements the kind's interface, plus the protocol of each optional capability it declares in its
``capabilities`` attribute; a conformance kit (where the kind has one) backs ``nenyax <kind>-check``.

A test (``packages/nenyax-core/tests/test_kinds_and_interfaces.py``) fails when the hookspecs or the
interfaces disagree with it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

FACTORY_CONVENTION = "factory(**options) -> instance"
"""How every plugin's factory is called, whatever its kind.

`options` are the keyword settings the user gave that plugin (a URI's ``judge.<key>`` values, a
config table, an Endpoint's provider options), nothing when none were given: ``factory()`` builds
the default instance. A factory takes each option as a keyword parameter with a default; the
registry binds the options to its signature before calling it and refuses an unknown or missing one
in one sentence (a factory may take ``**options`` to accept any). The kind's `Kind.options` are
passed whenever the caller has them, so every factory of that kind accepts them. What a plugin needs
at run time reaches it through its interface's methods (an adapter's ``load(uri, context)``), never
through its factory.
"""


# A dataclass, not attrs: `nenyax --help` reads this table, and importing attrs was a quarter of its start-up.
@dataclasses.dataclass(frozen=True)
class Kind:
    """One plugin kind: its name, registration hook, interface and conformance command."""

    name: str
    """Singular name, as in ``PluginSpec(kind=...)`` and ``nenyax <name>-check``."""
    hook: str
    """The registration hook in `nenyax.core.hookspecs`."""
    interface: str
    """``module:Protocol`` of what the plugin's factory returns (imported only when asked for)."""
    summary: str
    """One line for help text and docs."""
    options: tuple[str, ...] = ()
    """Options every factory of this kind accepts (the caller passes them whenever it has them)."""
    capabilities: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """Optional capability -> ``module:Protocol`` an instance declaring it (``capabilities.<name>``) also implements."""
    needs_a_capability: bool = False
    """True when an instance must declare at least one of `capabilities` (a judge judges something)."""
    kit: str | None = None
    """``module:CHECKS`` of this kind's own conformance checks (the common ones come on top); None: no kit yet."""

    @property
    def factory_signature(self) -> str:
        """The factory's call, as the docs show it: `FACTORY_CONVENTION` with this kind's options and interface."""
        named = "".join(f"{o}=..., " for o in self.options)
        return f"factory({named}**options) -> {self.interface.partition(':')[2]}"

    @property
    def check_command(self) -> str:
        """The CLI command that runs this kind's conformance kit (a command only where `kit` is set)."""
        return f"{self.name}-check"


KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind(
            "adapter",
            "nenyax_register_adapters",
            "nenyax.core.plugins.adapter:Adapter",
            "loads a URI of its format into an Environment (step, rollout or task mode)",
            capabilities={"listing": "nenyax.core.plugins.adapter:Lister"},
            kit="nenyax.testing.checks.adapter:ADAPTER_CHECKS",
        ),
        Kind(
            "provider",
            "nenyax_register_providers",
            "nenyax.core.plugins.provider:Provider",
            "the transport behind an Endpoint: one chat request in, one recorded ModelCall out",
            options=("base_url", "api_key"),
            kit="nenyax.testing.checks.provider:PROVIDER_CHECKS",
        ),
        Kind(
            "judge",
            "nenyax_register_judges",
            "nenyax.core.plugins.judge:Judge",
            "turns an answer, or a whole trajectory, into a Judgment",
            capabilities={
                "answer": "nenyax.core.plugins.judge:AnswerJudge",
                "trajectory": "nenyax.core.plugins.judge:TrajectoryJudge",
                "group": "nenyax.core.plugins.judge:GroupJudge",
                "model": "nenyax.core.plugins.judge:ModelJudge",
            },
            needs_a_capability=True,
            kit="nenyax.testing.checks.judge:JUDGE_CHECKS",
        ),
        Kind(
            "sandbox",
            "nenyax_register_sandboxes",
            "nenyax.core.plugins.sandbox:Sandbox",
            "builds images and runs isolated command sessions for task-mode formats",
            kit="nenyax.testing.checks.sandbox:SANDBOX_CHECKS",
        ),
        Kind(
            "learner",
            "nenyax_register_learners",
            "nenyax.core.plugins.learner:Learner",
            "improves a policy from groups of trainable trajectories, with save and restore",
            options=("model",),
            kit="nenyax.testing.checks.learner:LEARNER_CHECKS",
        ),
        Kind(
            "exporter",
            "nenyax_register_exporters",
            "nenyax.core.plugins.exporter:Exporter",
            "writes a stream of rows (raw, SFT, DPO) to a destination",
            kit="nenyax.testing.checks.exporter:EXPORTER_CHECKS",
        ),
        Kind(
            "tracer",
            "nenyax_register_tracers",
            "nenyax.core.plugins.tracer:Tracer",
            "an OpenTelemetry SDK provider that sends core's GenAI spans to one backend over OTLP",
            kit="nenyax.testing.checks.tracer:TRACER_CHECKS",
        ),
    )
}
"""Every plugin kind by name, in the order reports list them."""
