"""Saying why an episode failed: one line for any exception, and the errors that must stop a run instead."""

from __future__ import annotations

from nenyax.core.contract.failures import ABORT, describe

__all__ = ["ABORT", "describe"]
