"""Test policies that stand in for a chat model where a test needs exact replies or a failing provider.

They are fakes on purpose: no real model replies with a chosen text on cue, nor fails on cue; a test of
the real model uses the embedded one (``local:smollm2-135m``).
"""

from __future__ import annotations

from typing import Any

from nenyax.core.contract.trajectory import PolicyInfo
from nenyax.core.errors import InfraFailure


class Scripted:
    """A text policy replying from a script, in order, recording the messages it was shown."""

    speaks_text = True

    def __init__(self, *replies: Any, name: str = "scripted") -> None:
        """Reply with `replies` in turn (text, or an assistant message dict in a native loop)."""
        self.replies = list(replies)
        self.seen: list[list[dict[str, Any]]] = []
        self.info = PolicyInfo(kind="callable", name=name)

    async def act(self, turn: Any) -> Any:
        """The next scripted reply."""
        self.seen.append([dict(m) for m in turn.messages])
        return self.replies.pop(0)


class Outage:
    """A policy whose provider is down: every model call fails as infrastructure (the proxy answers 502)."""

    speaks_text = True
    info = PolicyInfo(kind="callable", name="outage")

    def __init__(self) -> None:
        """Count the calls that failed."""
        self.calls = 0

    async def act(self, turn: Any) -> Any:
        """Fail as the infrastructure would."""
        self.calls += 1
        msg = "The model server is down (a test outage)."
        raise InfraFailure(msg)
