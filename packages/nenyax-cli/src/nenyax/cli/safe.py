"""Text from environments, datasets, models and plugins is printed as data, never as terminal commands or markup."""

from __future__ import annotations

import re

from rich.text import Text

# C0 controls except tab and newline, DEL, C1 controls (ESC sequences start here), and the Unicode
# bidirectional overrides/isolates, which can make a terminal show text in another order than it is.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def neutral(value: str) -> str:
    """`value` with every control character written out visibly (``\\x1b``), so a terminal obeys none."""
    return _UNSAFE.sub(
        lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", value
    )


def safe_text(value: str, style: str = "") -> Text:
    """A rich `Text` of `value` as data: no markup is read from it and no control character reaches the terminal."""
    return Text(neutral(value), style=style)
