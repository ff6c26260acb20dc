"""The seven plugin kinds: the one table the hookspecs, registry, CLI, docs and conformance kit derive from.

A test (``packages/nenyax-core/tests/test_kinds_and_interfaces.py``) fails when the hookspecs or the
interfaces disagree with it.
"""

from __future__ import annotations

import attrs


@attrs.frozen
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

    @property
    def check_command(self) -> str:
        """The CLI command that runs this kind's conformance kit."""
        return f"{self.name}-check"


KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind(
            "adapter",
            "nenyax_register_adapters",
            "nenyax.core.plugins.adapter:Adapter",
            "loads a URI of its format into an Environment (step, rollout or task mode)",
        ),
        Kind(
            "provider",
            "nenyax_register_providers",
            "nenyax.core.plugins.provider:Provider",
            "the transport behind an Endpoint: one chat request in, one recorded ModelCall out",
        ),
        Kind(
            "judge",
            "nenyax_register_judges",
            "nenyax.core.plugins.judge:Judge",
            "turns an answer, or a whole trajectory, into a Judgment",
        ),
        Kind(
            "sandbox",
            "nenyax_register_sandboxes",
            "nenyax.core.plugins.sandbox:Sandbox",
            "builds images and runs isolated command sessions for task-mode formats",
        ),
        Kind(
            "learner",
            "nenyax_register_learners",
            "nenyax.core.plugins.learner:Learner",
            "improves a policy from groups of trainable trajectories, with save and restore",
        ),
        Kind(
            "exporter",
            "nenyax_register_exporters",
            "nenyax.core.plugins.exporter:Exporter",
            "writes a stream of rows (raw, SFT, DPO) to a destination",
        ),
        Kind(
            "tracer",
            "nenyax_register_tracers",
            "nenyax.core.plugins.tracer:Tracer",
            "span processors that send core's OpenTelemetry GenAI spans to a backend",
        ),
    )
}
"""Every plugin kind by name, in the order reports list them."""
