"""What each tier `nenyax check` reports promises, and what reaching it needs: the one table of these sentences.

They paraphrase the checks of `nenyax.core.tiers.checks` (``connectable/*`` ... ``audited/*``) for a reader
of the report; the checks themselves, not these words, decide the tier.
"""

from __future__ import annotations

from nenyax.core.contract.trajectory import Tier

PROMISES: dict[Tier, str] = {
    Tier.NONE: "Nothing is promised: it did not load, its manifest is invalid, or no episode could start.",
    Tier.CONNECTABLE: "It loads, its manifest is valid and an episode starts; no episode was seen to finish judged.",
    Tier.EVALUABLE: "Episodes finish with a finite judgment, so its scores can be read and compared.",
    Tier.TRAINABLE: (
        "A seed or task id recreates an episode (in a fresh process too), model calls are recorded and "
        "failures are classified, so no infrastructure error is ever trained on as a score of 0."
    ),
    Tier.AUDITED: (
        "Its verifier discriminates: the reference policy beats the null policy on every sampled task and "
        "the best constant answer by the margin, so a higher score means a better policy."
    ),
}
"""What the tier reached promises about the environment."""

NEEDS: dict[Tier, str] = {
    Tier.CONNECTABLE: "the environment to load with a valid manifest and start an episode.",
    Tier.EVALUABLE: "a full episode to complete with a finite judgment.",
    Tier.TRAINABLE: (
        "a seed or stable task id that recreates the episode, in a fresh process too, with the model's "
        "calls recorded and failures classified."
    ),
    Tier.AUDITED: (
        "a reference policy (an oracle) that beats the null policy on every sampled task and the "
        "environment's floor by the margin."
    ),
}
"""What reaching each tier needs beyond the one below it."""


def explain(tier: Tier) -> list[str]:
    """The lines under ``Tier: <label>``: what it promises and, below audited, what the next tier needs."""
    lines = [PROMISES[tier]]
    if tier is not Tier.AUDITED:
        above = Tier(tier + 1)
        lines.append(f"Next: {above.label} needs {NEEDS[above]} The checks above that did not pass say why.")
    return lines
