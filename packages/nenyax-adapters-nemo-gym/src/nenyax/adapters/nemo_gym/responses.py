"""The OpenAI Responses API objects ``/verify`` reads: what the policy produced, as output items.

Ids and timestamps are fixed, not random: the same actions then make the same request, and a
replayed episode is byte-for-byte the same.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any


def message(item_id: str, text: str) -> dict[str, Any]:
    """An assistant message with one ``output_text`` part."""
    return {
        "id": item_id,
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def function_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A function tool call (arguments as a JSON string, as the Responses API sends them)."""
    return {
        "id": f"fc_{call_id}",
        "type": "function_call",
        "call_id": call_id,
        "name": name,
        "arguments": json.dumps(arguments),
        "status": "completed",
    }


def function_call_output(call_id: str, output: str) -> dict[str, Any]:
    """What the server's tool route answered, paired with its call by id (as simple_agent records it)."""
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def response_object(output: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """A completed Responses API ``response`` holding `output`, with the fields NeMo Gym's model requires."""
    return {
        "id": "resp_nenyax",
        "object": "response",
        "created_at": 0,
        "model": "nenyax",
        "status": "completed",
        "output": list(output),
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": list(tools),
    }
