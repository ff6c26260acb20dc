"""The text codec: ORS prompts, tools and results as chat messages, and a model's reply as a tool call.

Models reply in the Hermes/Qwen form most chat models were tuned on,
``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``. Where the server has a terminal tool
(openreward) or the URI names one (``?terminal_tool=``), a reply with no tool call is that tool's
answer, as openreward's own harness does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from nenyax.core import PolicyFailure

_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")
_MAX_SHOWN = 4000
"""Characters of one block shown to the model (the full block stays in the step)."""


def blocks_text(blocks: Sequence[Any]) -> str:
    """ORS blocks as text: text blocks verbatim, image blocks named (the codec is text only)."""
    parts = []
    for block in blocks:
        if not isinstance(block, dict):
            parts.append(str(block))
        elif block.get("type") == "image":
            parts.append(f"[image ({block.get('mimeType', 'unknown type')}), not shown]")
        else:
            text = str(block.get("text", ""))
            parts.append(text if len(text) <= _MAX_SHOWN else text[:_MAX_SHOWN] + " [...]")
    return "\n".join(parts)


def _arguments(spec: dict[str, Any]) -> str:
    schema = spec.get("input_schema")
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not props:
        return "no arguments"
    required = set(schema.get("required", ())) if isinstance(schema, dict) else set()
    described = []
    for name, prop in props.items():
        prop = prop if isinstance(prop, dict) else {}
        kind = prop.get("type") or "/".join(str(p.get("type")) for p in prop.get("anyOf", ()) if isinstance(p, dict))
        note = f": {prop['description']}" if prop.get("description") else ""
        described.append(f"{name} ({kind or 'any'}{', required' if name in required else ''}){note}")
    return "arguments " + "; ".join(described)


def system_prompt(env: str, tools: Sequence[dict[str, Any]], plain_reply: tuple[str, str | None] | None) -> str:
    """What the model is told on the first turn: the tools and how to call one."""
    lines = [f"You are acting in the environment {env!r}. You act by calling its tools, one call per reply."]
    if tools:
        lines.append("Tools:")
        for spec in tools:
            description = " ".join(str(spec.get("description") or "").split())
            lines.append(f"- {spec.get('name')}: {description or 'no description'} Takes {_arguments(spec)}.")
        lines.append(
            'To call a tool, end your reply with <tool_call>{"name": "<tool>", "arguments": {...}}</tool_call>.'
        )
    if plain_reply is not None:
        lines.append("When you have the final answer, reply with the answer alone, without a tool call.")
    return "\n".join(lines)


def result_message(tool: str, blocks: Sequence[Any], reward: float | None) -> str:
    """A tool call's result as the next user turn."""
    text = blocks_text(blocks) or "(no output)"
    tail = f"\n(reward: {reward:g})" if reward is not None else ""
    return f"Result of {tool}:\n{text}{tail}"


def _decode_object(text: str) -> dict[str, Any] | None:
    text = _FENCE.sub("", text.strip())
    start = text.find("{")
    while start >= 0:
        try:
            value, _end = json.JSONDecoder().raw_decode(text, start)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    return None


def _as_call(obj: dict[str, Any], source: str) -> dict[str, Any]:
    name = obj.get("name")
    if not isinstance(name, str) or not name:
        msg = f'The tool call {source} names no tool; write {{"name": "<tool>", "arguments": {{...}}}}.'
        raise PolicyFailure(msg)
    args: Any = next((obj[k] for k in ("arguments", "input", "parameters") if k in obj), {})
    if isinstance(args, str):  # OpenAI's wire form sends arguments as a JSON string
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError as exc:
            msg = f"The arguments of the call to {name!r} are not JSON: {args[:80]!r}."
            raise PolicyFailure(msg) from exc
    if not isinstance(args, dict):
        msg = f"The arguments of the call to {name!r} must be a JSON object, not {type(args).__name__}."
        raise PolicyFailure(msg)
    return {"name": name, "input": args}


def parse_reply(text: str, tools: Sequence[str], plain_reply: tuple[str, str | None] | None) -> dict[str, Any]:
    """The tool call in a model's reply; `PolicyFailure` with one sentence when there is none."""
    if not isinstance(text, str):
        msg = f"Expected the model's reply as text, got {type(text).__name__}."
        raise PolicyFailure(msg)
    tagged = _TOOL_CALL.findall(text)
    if tagged:
        obj = _decode_object(tagged[-1])
        if obj is None:
            msg = f"The <tool_call> in the reply is not a JSON object: {tagged[-1][:80]!r}."
            raise PolicyFailure(msg)
        return _as_call(obj, "in <tool_call>")
    obj = _decode_object(text)
    if obj is not None and isinstance(obj.get("name"), str) and obj["name"] in tools:
        return _as_call(obj, "in the reply")  # a bare JSON call, as some models write without the tags
    if plain_reply is not None:
        name, arg = plain_reply
        return {"name": name, "input": {} if arg is None else {arg: text.strip()}}
    names = ", ".join(tools) or "none"
    msg = (
        'The reply has no tool call; end it with <tool_call>{"name": "<tool>", "arguments": {...}}</tool_call> '
        f"naming one of the tools ({names})."
    )
    raise PolicyFailure(msg)
