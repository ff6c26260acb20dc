"""The interface of each plugin kind, resolved from the kinds table (`nenyax.core.kinds.KINDS`)."""

from __future__ import annotations

import importlib
from typing import Any

from nenyax.core.kinds import KINDS


def interface(kind: str) -> Any:
    """The protocol a `kind` plugin's factory returns (imported on demand)."""
    module, _, attr = KINDS[kind].interface.partition(":")
    return getattr(importlib.import_module(module), attr)


def implements(kind: str, obj: object) -> bool:
    """True when `obj` has the methods of `kind`'s interface (judges: either judging method)."""
    if kind == "judge":
        from nenyax.core.plugins.judge import is_judge

        return is_judge(obj)
    return isinstance(obj, interface(kind))
