"""Conformance checks by plugin kind (plain functions; pytest is not needed), derived from the kinds table.

A kind has a kit when its `nenyax.core.kinds.Kind.kit` names its own checks; its kit is the common
checks every kind shares (`common_checks`) followed by those.
"""

from nenyax.core.kinds import KINDS
from nenyax.core.plugins.registry import import_factory
from nenyax.testing.checks.common import common_checks
from nenyax.testing.report import Check

CHECKS: dict[str, tuple[Check, ...]] = {
    name: common_checks(name) + tuple(import_factory(kind.kit)) for name, kind in KINDS.items() if kind.kit
}
"""Every check of each kind that has a kit so far, in the order they run."""

__all__ = ["CHECKS", "common_checks"]
