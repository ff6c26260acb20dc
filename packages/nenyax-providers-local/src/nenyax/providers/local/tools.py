"""Tool calling for chat models whose template knows no tools (SmolLM2's): tools go into the system
prompt in the form the model was trained on, and its ``<tool_call>`` output comes back as OpenAI
``tool_calls``.

SmolLM2-Instruct was trained to answer a tools prompt with ``<tool_call>[{"name": ..., "arguments":
{...}}, ...]</tool_call>``; Hermes-style models write one ``<tool_call>{"name": ..., "arguments": ...}
</tool_call>`` block per call. Both parse here. A model whose own template renders tools (it mentions
``tools``) gets them through the template instead.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Sequence
from typing import Any

import orjson

from nenyax.core import new_id

# SmolLM2's function-calling system prompt (from its model card), with the tool schemas in <tools>.
TOOLS_PROMPT = """You are an expert in composing functions. You are given a question and a set of possible functions.
Based on the question, you will need to make one or more function/tool calls to achieve the purpose.
If none of the functions can be used, point it out and refuse to answer.
If the given question lacks the parameters required by the function, also point it out.

You have access to the following tools:
<tools>{tools}</tools>

The output MUST strictly adhere to the following format, and NO other text MUST be included.
The example format is as follows. Please make sure the parameter type is correct. If no function call is needed, please make the tool calls an empty list '[]'.
<tool_call>[
{{"name": "func_name1", "arguments": {{"argument1": "value1", "argument2": "value2"}}}},
... (more tool calls as required)
]</tool_call>"""  # noqa: E501 - the prompt verbatim

_BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.S)

INVALID_TOOL_CALL = "invalid_tool_call"
"""The finish reason of a reply that tried to call a tool in a form that does not parse (kept as text)."""


def template_knows_tools(template: str) -> bool:
    """Whether a chat template renders tool schemas itself."""
    return "tools" in template


def _call_text(message: dict[str, Any]) -> str:
    calls = []
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            with contextlib.suppress(ValueError):
                arguments = json.loads(arguments)
        calls.append({"name": function.get("name"), "arguments": arguments})
    head = message.get("content") or ""
    return f"{head}<tool_call>{json.dumps(calls)}</tool_call>"


def render(messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """`messages` for a template that knows no tools: the tools prompt in the system message, earlier
    tool calls written back as the model wrote them, and every content a string."""
    out: list[dict[str, Any]] = []
    for message in messages:
        message = dict(message)
        if message.get("tool_calls"):
            message = {"role": message.get("role", "assistant"), "content": _call_text(message)}
        elif not isinstance(message.get("content"), str):
            content = message.get("content")
            if isinstance(content, list):  # content parts: the text ones
                content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
            message["content"] = "" if content is None else str(content)
        out.append(message)
    if tools:
        schemas = [tool.get("function", tool) for tool in tools]
        prompt = TOOLS_PROMPT.format(tools=json.dumps(schemas))
        if out and out[0].get("role") == "system":
            out[0] = {**out[0], "content": f"{out[0]['content']}\n\n{prompt}"}
        else:
            out.insert(0, {"role": "system", "content": prompt})
    return out


def parse(text: str) -> tuple[str | None, list[dict[str, Any]] | None, bool]:
    """`text`'s tool calls: (the text outside them or None, OpenAI ``tool_calls`` or None, parsed).

    `parsed` is False when the text has a ``<tool_call>`` that is not a call (then keep it as text).
    An empty list (SmolLM2's "no call needed") is no call.
    """
    blocks = _BLOCK.findall(text)
    if not blocks:
        return text, None, True
    calls: list[dict[str, Any]] = []
    for block in blocks:
        try:
            found = orjson.loads(block.strip())
        except orjson.JSONDecodeError:
            return text, None, False
        for item in found if isinstance(found, list) else [found]:
            if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item["name"]:
                return text, None, False
            arguments = item.get("arguments", item.get("parameters", {}))
            calls.append(
                {
                    "id": f"call_{new_id()[:24]}",
                    "type": "function",
                    "function": {
                        "name": item["name"],
                        "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
                    },
                }
            )
    rest = _BLOCK.sub("", text).strip()
    if not calls:
        return rest, None, True
    return rest or None, calls, True


def reply(
    text: str, finish: str | None, tools: Sequence[dict[str, Any]], params: dict[str, Any]
) -> tuple[dict[str, Any], str | None]:
    """The assistant message for a reply's `text` and its finish reason: where tools were offered, its tool
    calls parsed (``tool_calls``; only the first with ``parallel_tool_calls`` false), and a call that does not
    parse kept as text with the finish reason `INVALID_TOOL_CALL`."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if not tools:
        return message, finish
    content, calls, parsed = parse(text)
    if calls:
        if params.get("parallel_tool_calls") is False:
            calls = calls[:1]
        called = {"role": "assistant", "content": content, "tool_calls": calls}
        return called, "tool_calls" if finish == "stop" else finish
    return message, finish if parsed else INVALID_TOOL_CALL
