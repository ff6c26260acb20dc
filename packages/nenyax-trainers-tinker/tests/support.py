"""What the tests share: how Nenyax itself judges a reply, to compare the cookbook's rewards with."""

from __future__ import annotations

from nenyax.core import StepEnvironment, load


def nenyax_score(uri: str, task: str, seed: int | None, reply: str) -> float:
    """The score Nenyax's own session gives `reply` to `task` (a fresh session, the reply played as is)."""
    env = load(uri)
    assert isinstance(env, StepEnvironment)
    session = env.session(task=task, seed=seed)
    step = session.act(session.parse_action(reply))
    assert session.done
    return session.judge([step]).score
