"""Building another plugin from inside a plugin: by kind and name, with the capabilities it must have."""

from __future__ import annotations

from nenyax.core.plugins.interfaces import create
from nenyax.core.plugins.registry import option_problem

__all__ = ["create", "option_problem"]
