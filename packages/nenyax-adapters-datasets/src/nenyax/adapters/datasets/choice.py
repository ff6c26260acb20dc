"""The ``choice`` judge: a multiple-choice answer (a label such as ``B``) against the gold label.

The label is read from what the reply answered (`nenyax.core.toolkit.qa.extract_answer` has already
taken it out of ``The answer is B.`` or ``<answer>B</answer>``): ``B``, ``b``, ``B)``, ``(B)``, ``B.``,
``**B**``, ``\\text{(B)}``, ``B) Jupiter``, ``(B) Jupiter``, ``Option B``, ``Answer: B``. When the task
carries its options (`golds.ChoiceGold`), the text of an option (``Jupiter``) is read as its label, and
a label followed by another option's text (``B) Mars`` where Mars is C) contradicts itself and scores 0.
Labels are one letter or a number of at most two digits, compared without case.
"""

from __future__ import annotations

import re
from typing import Any

from nenyax.adapters.datasets.golds import ChoiceGold, ListGold
from nenyax.adapters.datasets.judges import normalize
from nenyax.core import JudgeCapabilities, Judgment
from nenyax.core.errors import UsageError, VerifierFailure
from nenyax.core.toolkit.qa import quoted

_LABEL = r"[A-Za-z]|\d{1,2}"
# "The answer is", "Answer:", "Option", "Choice (B)": words before the label.
_LEAD = r"(?:(?:the\s+)?(?:correct\s+|final\s+)?(?:answer|option|choice)\s*(?:is\s*)?[:\-]?\s*)?"
_ONLY = re.compile(rf"{_LEAD}[(\[]?(?P<label>{_LABEL})[)\]]?[.:)]?", re.IGNORECASE)
_WITH_TEXT = re.compile(
    rf"{_LEAD}(?:[(\[](?P<wrapped>{_LABEL})[)\]]|(?P<bare>{_LABEL})[.:)])\s*(?P<text>\S.*)", re.IGNORECASE | re.DOTALL
)
_GOLD = re.compile(rf"[(\[]?(?P<label>{_LABEL})[)\]]?\.?")
_TEXT_COMMAND = re.compile(r"\\(?:text|textbf|mathrm|mathbf)\{([^{}]*)\}")


def _clean(text: str) -> str:
    text = _TEXT_COMMAND.sub(r"\1", str(text))
    return text.strip().strip("*_`$ \t\n").strip()


def gold_label(reference: Any) -> str | None:
    """The label a gold names (``B`` from ``B``, ``(b)`` or ``B.``), or None when it names none."""
    if isinstance(reference, ChoiceGold):
        reference = reference.label
    if isinstance(reference, ListGold):
        return None
    match = _GOLD.fullmatch(_clean(str(reference)))
    return match.group("label").upper() if match else None


def read_label(answer: str, options: tuple[tuple[str, str], ...] = ()) -> str | None:
    """The label `answer` chooses (upper case), or None when it chooses none or contradicts itself."""
    text = _clean(answer)
    by_text = {normalize(option): label.upper() for label, option in options if normalize(option)}
    only = _ONLY.fullmatch(text)
    if only:
        return only.group("label").upper()
    if normalize(text) in by_text:
        return by_text[normalize(text)]
    with_text = _WITH_TEXT.fullmatch(text)
    if with_text is None:
        return None
    label = (with_text.group("wrapped") or with_text.group("bare")).upper()
    named = by_text.get(normalize(_clean(with_text.group("text"))))
    return None if named is not None and named != label else label


class ChoiceJudge:
    """The chosen label equals the gold label (see the module docstring for what a reply may look like).

    With ``index_base`` (``?judge.index_base=0`` for MMLU's ``"answer": 1``), a gold that is a whole
    number is the index of the right option, counted from that base, rather than a label.
    """

    capabilities = JudgeCapabilities(answer=True)

    def __init__(self, index_base: int | None = None) -> None:
        """`index_base`: None (golds are labels), or 0 or 1 (a numeric gold is an option's index from it)."""
        if index_base is not None and (isinstance(index_base, bool) or index_base not in (0, 1)):
            msg = f"The choice judge's index_base must be 0 or 1, got {index_base!r}."
            raise UsageError(msg)
        self.index_base = index_base

    def _gold(self, reference: Any) -> str | None:
        """The gold's label: an index turned into its option's label under `index_base`."""
        label = gold_label(reference)
        if self.index_base is None or label is None or not label.isdecimal():
            return label
        if not isinstance(reference, ChoiceGold) or not reference.options:
            return None
        position = int(label) - self.index_base
        return reference.options[position][0].upper() if 0 <= position < len(reference.options) else None

    def gold_answer(self, reference: Any) -> str:
        """The reply that chooses `reference`: its label (an index's option's label), for the reference policy."""
        return self._gold(reference) or str(reference)

    def unreadable_gold(self, reference: Any) -> str | None:
        """What makes `reference` no gold for this judge (no label, or not one of the task's options), or None."""
        label = self._gold(reference)
        if label is None and self.index_base is not None and gold_label(reference):
            return f"a gold index {str(reference)!r} that is no option's (counted from {self.index_base})"
        if label is None:
            shown = "a list" if isinstance(reference, ListGold) else repr(str(reference)[:80])
            return f"a gold answer that is not a choice label such as A or (B) ({shown})"
        if isinstance(reference, ChoiceGold) and reference.options:
            labels = [option_label.upper() for option_label, _text in reference.options]
            if label not in labels:
                hint = "; if it is an option's index, set ?judge.index_base=0 or 1" if label.isdecimal() else ""
                return f"a gold label {label!r} that is none of the task's options ({', '.join(labels)}){hint}"
        return None

    def judge(self, answer: str, reference: Any) -> Judgment:
        """1 when the reply chooses the gold's label; 0 when it chooses another or none."""
        problem = self.unreadable_gold(reference)
        if problem is not None:
            msg = f"The choice judge cannot use {problem[0].lower()}{problem[1:]}."
            raise VerifierFailure(msg)
        gold = self._gold(reference)
        options = reference.options if isinstance(reference, ChoiceGold) else ()
        chosen = read_label(answer, options)
        ok = chosen is not None and chosen == gold
        how = f"chose {chosen}" if chosen is not None else "no choice read"
        return Judgment(
            score=1.0 if ok else 0.0,
            passed=ok,
            components={"choice": 1.0 if ok else 0.0},
            feedback=f"answered {quoted(answer)}, expected {quoted(str(gold))} ({how})",
            judge="choice",
        )
