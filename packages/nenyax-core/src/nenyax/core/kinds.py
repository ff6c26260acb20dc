"""The seven plugin kinds: one table that the hookspecs, registry, CLI and kit are driven by."""

from __future__ import annotations

import attrs


@attrs.frozen
class Kind:
    """One plugin kind: its singular name, its registration hook and what its factory returns."""

    name: str
    hook: str
    interface: str
    summary: str


KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind("adapter", "nenyax_register_adapters", "Adapter", "loads a URI of its format into an Environment"),
        Kind("provider", "nenyax_register_providers", "Provider", "the transport behind an Endpoint"),
        Kind("judge", "nenyax_register_judges", "Judge", "turns a finished episode into a Judgment"),
        Kind("sandbox", "nenyax_register_sandboxes", "Sandbox", "runs commands in isolation"),
        Kind("learner", "nenyax_register_learners", "Learner", "improves a policy from groups of trajectories"),
        Kind("exporter", "nenyax_register_exporters", "Exporter", "writes trajectories in some row shape"),
        Kind("tracer", "nenyax_register_tracers", "Tracer", "sends OpenTelemetry GenAI spans somewhere"),
    )
}
"""Every plugin kind by name, in the order reports list them."""
