"""The `acme` judge: exact match, ignoring case and surrounding space. This is the file to make your own.

A judge declares what it judges in `capabilities` and has the method of each: ``answer`` (this one:
`judge(answer, reference)`, for question/answer formats, the answer being the text extracted from the
policy's reply) and ``trajectory`` (`judge_trajectory(trajectory, reference)`, for judges that read a whole
episode). What it decides is a `Judgment`; what it cannot decide (a reference it cannot use) is a
`VerifierFailure` sentence, never a made-up 0 and never another exception.
"""

from __future__ import annotations

from typing import Any

from nenyax.core import JudgeCapabilities, Judgment, VerifierFailure


class AcmeJudge:
    """The `acme` judge (what the plugin's factory returns).

    `case_sensitive` is an option (``?judge.case_sensitive=true`` on a URI that names this judge).
    """

    capabilities = JudgeCapabilities(answer=True)

    def __init__(self, case_sensitive: bool = False) -> None:
        """Build the judge; every option has a default, so ``AcmeJudge()`` is the default judge."""
        self.case_sensitive = case_sensitive

    def _normal(self, text: str) -> str:
        text = text.strip()
        return text if self.case_sensitive else text.casefold()

    def judge(self, answer: str, reference: Any) -> Judgment:
        """1 when `answer` is `reference` (a gold answer: text or a number), else 0."""
        if isinstance(reference, bool) or not isinstance(reference, str | int | float):
            msg = f"The acme judge compares with a gold answer (text or a number), not {type(reference).__name__}."
            raise VerifierFailure(msg)
        gold = self._normal(str(reference))
        if not gold:
            msg = "The acme judge was given an empty gold answer, which no answer can match."
            raise VerifierFailure(msg)
        passed = self._normal(answer) == gold
        return Judgment(score=float(passed), passed=passed, judge="acme")
