"""Gold answers that are more than one text: a list (an ARC grid) and a choice among a task's options.

Both read as their text (``str()``), so a judge that knows only text still judges them; the built-in
judges also use their structure.
"""

from __future__ import annotations

import json
import re

import attrs

# A JSON number as `textfiles` keeps it (its text as written): written back unquoted.
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")

Nested = tuple["str | Nested", ...]
"""A list gold's items: texts, or lists of them."""


def _item_text(item: str | Nested) -> str:
    if isinstance(item, tuple):
        return "[" + ", ".join(_item_text(sub) for sub in item) + "]"
    return item if _JSON_NUMBER.fullmatch(item) else json.dumps(item, ensure_ascii=False)


@attrs.frozen
class ListGold:
    """One gold answer that is a list (a JSON array of arrays, such as an ARC grid), not several answers."""

    items: Nested

    def __str__(self) -> str:
        """The list as JSON, numbers unquoted: ``[[1, 2], [3, 4]]``."""
        return _item_text(self.items)


@attrs.frozen
class ChoiceGold:
    """A gold choice label (``B``) and the task's options as (label, text) pairs, in order."""

    label: str
    options: tuple[tuple[str, str], ...] = ()

    def __str__(self) -> str:
        """The label."""
        return self.label
