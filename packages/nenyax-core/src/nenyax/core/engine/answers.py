"""Finding the final answer in a model's reply: shared by every question-and-answer format.

One set of rules, so the same reply scores the same way whichever adapter judges it. Only a final
answer counts: a marked one (the answer tag, a box, "the answer is"), or a reply that is nothing but
one line. Working shown along the way is never mistaken for the answer: a reply of several lines
ending "so 2 + 3 = 5, and the area is 10" marks none, so its answer is empty, never the ``5`` after
the ``=`` nor the last number (and a one-line reply is judged whole, prose and all).
"""

from __future__ import annotations

import random
import re
import string

ANSWER_RULES = (
    "The final answer, as text: the last <answer>...</answer> (the last \\boxed{...} inside it, if any), "
    "else the last \\boxed{...}, else what follows the last 'the answer is' or 'Answer:' up to the end of "
    "its sentence; a reply with none of these is its own answer only when it is a single line (such as 42). "
    "Nothing else is read as the answer: an '=' or a number inside prose is not one."
)
"""How `extract_answer` reads a reply, for manifests' action descriptions."""

_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)
# "The answer is 17.", "Final answer: 17", "**Answer:** 17", "the final answer is: $17$".
_ANSWER_IS = re.compile(
    r"\b(?:final\s+)?answer\s*(?:\*\*)?\s*(?:is\b\s*:?|:)\s*(?:\*\*)?[ \t]*(?P<answer>[^\n]*)", re.IGNORECASE
)
# The answer runs to the end of its sentence: a period, "!" or "?" followed by a space or the line's end
# ("3.5" keeps its point), else to the end of the line.
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
_BOXED = "\\boxed{"


FEEDBACK_CLIP = 80
"""How much of an answer a judge's feedback quotes (the whole answer is in the step's info)."""


def quoted(answer: str, limit: int = FEEDBACK_CLIP) -> str:
    """`answer` quoted for a feedback sentence, clipped with an ellipsis past `limit` characters."""
    if len(answer) <= limit:
        return repr(answer)
    return repr(answer[: limit - 1]) + "\u2026"


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


def _answer_is(text: str) -> str | None:
    """What follows the last "the answer is" / "Answer:" that is followed by anything, or None."""
    for match in reversed(list(_ANSWER_IS.finditer(text))):
        rest = match.group("answer").strip()
        end = _SENTENCE_END.search(rest)
        answer = (rest[: end.start()] if end else rest).strip().strip("*").strip()
        if answer:
            return answer
    return None


def extract_answer(text: str) -> str:
    """The final answer in `text` by `ANSWER_RULES`; the empty string when the reply marks none.

    In order: the last ``<answer>..</answer>`` (its last ``\\boxed{..}`` when it holds one), else the
    last ``\\boxed{..}``, else what follows the last "the answer is" / "Answer:" to the end of its
    sentence, else the whole reply when it is a single line.
    """
    tags = _ANSWER_TAG.findall(text)
    if tags:
        tagged = tags[-1].strip()
        boxed = last_boxed(tagged)
        return boxed if boxed is not None else tagged
    boxed = last_boxed(text)
    if boxed is not None:
        return boxed
    said = _answer_is(text)
    if said is not None:
        return said
    stripped = text.strip()
    # A bare reply ("42", "x = 3", "Yes") is an answer; several lines without a marked answer are working.
    return stripped if "\n" not in stripped else ""


def garbage_answer(rng: random.Random) -> str:
    """A random string of letters and digits: what the built-in random policy answers to a question."""
    alphabet = string.ascii_lowercase + string.digits
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(6, 16)))


CONSTANT_ANSWERS = ("0", "1", "Yes", "No", "True", "False", "A", "")
"""Answers a lazy policy could give to every question: the audit's constant probes for question formats."""
