"""The ``<action>`` text-action codec: where a chat model's reply writes its action, and how errors quote it.

A text codec tells the model to answer with its action inside ``<action></action>``. `candidates`
gives the places such an action may stand in a reply (the last tag, else the whole reply, its last
JSON object and its last line); the adapter reads each in its own action space and keeps the first
that fits. `reply_text` and `clip` make the one-sentence `PolicyFailure` every codec raises.
"""

from __future__ import annotations

import re

from nenyax.core.errors import PolicyFailure

ACTION_TAG = re.compile(r"<action>(.*?)</action>", re.DOTALL | re.IGNORECASE)
"""An action tag, any case; the reply's last one is the answer."""
_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def candidates(text: str, *, objects: bool = False) -> tuple[list[str], bool]:
    """Where the action may be written in `text`, most likely first, and whether the reply tagged it.

    A tagged reply gives only its last tag's content (code fences removed). An untagged one gives the
    whole reply, then (with `objects`) its last ``{...}``, then its last line when it has several.
    """
    tags = ACTION_TAG.findall(text)
    if tags:
        return [_FENCE.sub("", tags[-1].strip()).strip()], True
    stripped = _FENCE.sub("", text.strip()).strip()
    found = [stripped]
    if objects:
        found += _OBJECT.findall(stripped)[-1:]
    lines = [line.strip() for line in stripped.splitlines() if line.strip()]
    if len(lines) > 1:
        found.append(lines[-1])
    return found, False


def reply_text(reply: object) -> str:
    """`reply` itself when it is text; else the `PolicyFailure` a codec raises for it."""
    if not isinstance(reply, str):
        msg = f"Expected the model's reply as text, got {type(reply).__name__}."
        raise PolicyFailure(msg)
    return reply


def clip(text: str, limit: int = 60) -> str:
    """`text` on one line, cut to `limit` characters, quoted: how an error message shows a model's words."""
    one_line = " ".join(text.split())
    return repr(one_line if len(one_line) <= limit else one_line[: limit - 3] + "...")
