"""Finding the final answer in a model's reply: shared by every question-and-answer format.

One set of rules, so the same reply scores the same way whichever adapter judges it.
"""

from __future__ import annotations

import random
import re
import string

ANSWER_RULES = (
    "The answer, as text. It is taken from the last <answer>...</answer>, else \\boxed{...}, "
    "else an 'Answer: ...' final line, else the final line."
)
"""How `extract_answer` reads a reply, for manifests' action descriptions."""

_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)
_ANSWER_LINE = re.compile(r"(?:final answer|answer)\s*(?:is|:)\s*(.+?)\s*\.?\s*$", re.IGNORECASE)
_BOXED = "\\boxed{"


def last_boxed(text: str) -> str | None:
    """The content of the last ``\\boxed{...}`` (braces balanced), or None."""
    start = text.rfind(_BOXED)
    if start < 0:
        return None
    depth, i = 1, start + len(_BOXED)
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return text[i:j].strip()
    return None


def extract_answer(text: str) -> str:
    """The answer in `text`: the last ``<answer>..</answer>``, else ``\\boxed{..}``, else an
    ``Answer: ..`` / ``the answer is ..`` final line, else the last non-empty line.
    """
    tags = _ANSWER_TAG.findall(text)
    if tags:
        return tags[-1].strip()
    boxed = last_boxed(text)
    if boxed is not None:
        return boxed
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    match = _ANSWER_LINE.search(lines[-1])
    if match:
        return match.group(1).strip()
    return lines[-1]


def garbage_answer(rng: random.Random) -> str:
    """A random string of letters and digits: what the built-in random policy answers to a question."""
    alphabet = string.ascii_lowercase + string.digits
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(6, 16)))


CONSTANT_ANSWERS = ("0", "1", "Yes", "No", "True", "False", "A", "")
"""Answers a lazy policy could give to every question: the audit's constant probes for question formats."""
