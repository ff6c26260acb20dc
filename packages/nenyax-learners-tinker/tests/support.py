"""What the test modules import by name besides the fake SDK (this folder is on `pythonpath`)."""

import attrs

from nenyax.core.contract.trajectory import Group, Judgment

ENV_URI = "reasoning_gym:basic_arithmetic?size=6&seed=11"
"""Tasks whose prompts are short: the embedded model answers them in a few seconds on a CPU."""


def scored(group: Group, scores: list[float]) -> Group:
    """The group with its members' scores set (the model rarely answers correctly, so the tests choose)."""
    members = tuple(
        attrs.evolve(t, judgment=Judgment(score=s, judge="test"))
        for t, s in zip(group.trajectories, scores, strict=True)
    )
    return attrs.evolve(group, trajectories=members)
