"""`ToolSession`: a step session a model can drive by calling its tools natively, through a loop not Nenyax's.

Nenyax's own step loop shows a chat model the tools in text and parses its reply with the session's codec
(`Session.render`, `Session.parse_action`). A trainer with a tool loop of its own (TRL's
``environment_factory``) instead gives the model the tools as function schemas in its chat template, parses
the calls itself and hands back each result as a tool message. A session that also offers the methods below
can be played that way; an adapter implements them beside its `Session` (no base class to inherit).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from nenyax.core.contract.trajectory import Step


@runtime_checkable
class ToolSession(Protocol):
    """A step session whose actions are tool calls a model can make natively (see the module docstring).

    A reply with no tool call still ends the episode as Nenyax's own loop ends it: the loop driving the
    session hands it to `Session.parse_action` (a terminal tool's answer, or the policy's error).
    """

    def tool_specs(self) -> list[dict[str, Any]]:
        """The session's tools as OpenAI function tools: ``{"type": "function", "function": {"name",
        "description", "parameters"}}``, ``parameters`` a JSON schema of an object."""
        ...

    def task_text(self) -> str:
        """The task as the first user message says it to a model that calls the tools natively (no tool
        syntax of the text codec: the model's chat template presents the tools)."""
        ...

    def tool_action(self, name: str, arguments: dict[str, Any]) -> Any:
        """The action calling tool `name` with `arguments` (what `Session.act` takes)."""
        ...

    def tool_reply(self, step: Step) -> str:
        """What the call `step` made answered, as the text of the tool message the model reads next."""
        ...
