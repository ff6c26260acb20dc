"""OpenAI Responses wire format <-> chat messages, for the recording proxy's ``/v1/responses`` route.

Input items become chat messages (a ``function_call`` joins an assistant message's ``tool_calls``, a
``function_call_output`` is a ``tool`` message), flat function tools become chat tools, and a recorded
call's reply becomes Responses output items (a message, then one ``function_call`` per tool call). What
cannot be carried is refused (`RequestRefused`, HTTP 400), never dropped.
"""

from __future__ import annotations

import time
from typing import Any

from nenyax.core.contract.trajectory import ModelCall, new_id
from nenyax.core.errors import RequestRefused


def responses_tools(body: dict[str, Any]) -> tuple[tuple[dict[str, Any], ...], Any]:
    """Responses' flat function tools and tool_choice, in the chat shape."""
    tools = []
    for tool in body.get("tools") or ():
        if not isinstance(tool, dict) or tool.get("type") != "function":
            kind = tool.get("type") if isinstance(tool, dict) else type(tool).__name__
            raise RequestRefused(f"This proxy serves function tools only, not {kind!r} tools.")
        function = {k: tool[k] for k in ("name", "description", "parameters", "strict") if k in tool}
        tools.append({"type": "function", "function": function})
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "function":
        choice = {"type": "function", "function": {"name": choice.get("name")}}
    return tuple(tools), choice


def _text(content: Any) -> str:
    if isinstance(content, list):  # [{"type": "input_text", "text": ...}, ...]
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def messages_from_input(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Responses input items as chat messages: function calls join an assistant message, outputs are tool messages."""
    messages: list[dict[str, Any]] = []
    if body.get("instructions"):
        messages.append({"role": "system", "content": body["instructions"]})
    items = body.get("input", "")
    if isinstance(items, str):
        return [*messages, {"role": "user", "content": items}]
    if not isinstance(items, list):
        raise RequestRefused("'input' must be a string or a list of input items.")
    for item in items:
        if not isinstance(item, dict):
            raise RequestRefused(f"Each input item must be an object, not {type(item).__name__}.")
        kind = item.get("type", "message")
        if kind == "message":
            messages.append({"role": item.get("role", "user"), "content": _text(item.get("content"))})
        elif kind == "function_call":
            call = {
                "id": item.get("call_id") or item.get("id"),
                "type": "function",
                "function": {"name": item.get("name"), "arguments": item.get("arguments") or ""},
            }
            last = messages[-1] if messages else None
            if last is not None and last["role"] == "assistant" and (last.get("tool_calls") or not last["content"]):
                last.setdefault("tool_calls", []).append(call)
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            output = item.get("output")
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": item.get("call_id"),
                    "content": output if isinstance(output, str) else _text(output),
                }
            )
        elif kind == "reasoning":
            continue  # the model's own earlier reasoning summary: nothing a chat model is sent
        else:
            raise RequestRefused(f"This proxy cannot carry {kind!r} input items (messages and function calls only).")
    return messages


def _output(call: ModelCall) -> list[dict[str, Any]]:
    output: list[dict[str, Any]] = []
    text = call.response.get("content")
    if text or not call.response.get("tool_calls"):
        output.append(
            {
                "type": "message",
                "id": f"msg_{new_id()}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": str(text or ""), "annotations": []}],
            }
        )
    for tool_call in call.response.get("tool_calls") or ():
        function = tool_call.get("function") or {}
        output.append(
            {
                "type": "function_call",
                "id": f"fc_{new_id()}",
                "call_id": tool_call.get("id") or f"call_{new_id()}",
                "name": function.get("name"),
                "arguments": function.get("arguments") or "",
                "status": "completed",
            }
        )
    return output


def response_json(call: ModelCall, body: dict[str, Any], *, model: str) -> dict[str, Any]:
    """A ``response`` object answering `body` with the recorded `call`."""
    return {
        "id": f"resp_{new_id()}",
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": model,
        "output": _output(call),
        "output_text": str(call.response.get("content") or ""),
        "parallel_tool_calls": True,
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools") or [],
        "usage": {
            "input_tokens": call.usage.get("prompt_tokens", 0),
            "output_tokens": call.usage.get("completion_tokens", 0),
            "total_tokens": call.usage.get("total_tokens", 0),
        },
    }
