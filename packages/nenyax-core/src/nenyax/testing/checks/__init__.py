"""Conformance checks by plugin kind (plain functions; pytest is not needed)."""

from nenyax.testing.checks.adapter import ADAPTER_CHECKS
from nenyax.testing.report import Check

CHECKS: dict[str, tuple[Check, ...]] = {"adapter": ADAPTER_CHECKS}
"""Checks of each kind that has a kit so far."""

__all__ = ["CHECKS"]
