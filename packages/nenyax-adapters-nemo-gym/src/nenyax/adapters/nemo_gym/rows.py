"""Dataset rows: reading a JSONL file of them, their gold answers, and how a chat model sees them.

A NeMo Gym row is ``{"responses_create_params": {"input": [...], "tools": [...]?}, ...verifier fields}``;
the whole row goes to ``/seed_session`` and, with the model's response, to ``/verify``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nenyax.core import BadURIError

GOLD_FIELDS = ("expected_answer", "answer", "ground_truth", "gold", "target", "solution")
"""Fields holding a row's gold answer, in the order they are looked for (mcqa: expected_answer,
reasoning_gym: answer)."""

DEFAULT_REFERENCE = "<answer>{gold}</answer>\n\\boxed{{gold}}"
"""The reference reply: the gold in answer tags, then boxed, so parsers of either kind read it
(reasoning_gym takes <answer> first; mcqa's strict mode takes the first \\boxed{LETTER})."""

TOOL_PROMPT = (
    "You can call these tools; each is given with the JSON schema of its arguments:\n{tools}\n"
    'To call one, reply with only <tool_call>{{"name": "<tool name>", "arguments": {{...}}}}</tool_call>. '
    "When you are done, reply with your final answer and no tool call."
)


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Every row of the JSONL file `path`; a missing file or a bad line is one `BadURIError` sentence."""
    if not path.is_file():
        msg = f"No JSONL file of dataset rows at {path}; give ?rows=<path to a .jsonl file>."
        raise BadURIError(msg)
    rows = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                msg = f"Line {number} of {path} is not JSON ({exc.msg})."
                raise BadURIError(msg) from exc
            params = row.get("responses_create_params") if isinstance(row, dict) else None
            if not isinstance(params, dict) or "input" not in params:
                msg = f"Line {number} of {path} is not a NeMo Gym row: it has no responses_create_params.input."
                raise BadURIError(msg)
            rows.append(row)
    if not rows:
        msg = f"{path} holds no dataset rows."
        raise BadURIError(msg)
    return rows


def file_digest(path: Path) -> str:
    """sha256 of the file's bytes: the manifest changes whenever the rows do."""
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def _gold(row: dict[str, Any], field: str) -> str | None:
    value = row.get(field)
    if isinstance(value, bool) or not isinstance(value, str | int | float) or value == "":
        return None
    return str(value)


def pick_gold_field(rows: Sequence[dict[str, Any]], wanted: str | None) -> str | None:
    """The field every row has a scalar gold answer in (`wanted` if given), or None: then no reference."""
    if wanted is not None:
        missing = [i for i, row in enumerate(rows) if _gold(row, wanted) is None]
        if missing:
            msg = f"Row {missing[0]} has no answer in the gold field {wanted!r}; name another with ?gold_field=."
            raise BadURIError(msg)
        return wanted
    for field in GOLD_FIELDS:
        if all(_gold(row, field) is not None for row in rows):
            return field
    return None


def gold_answer(row: dict[str, Any], field: str) -> str:
    """The row's gold answer as text (`pick_gold_field` made sure it has one)."""
    return _gold(row, field) or ""


def input_items(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The row's prompt as Responses API input items (``instructions`` first, as a system message)."""
    params = row["responses_create_params"]
    raw = params["input"]
    items = [{"role": "user", "content": raw}] if isinstance(raw, str) else [dict(i) for i in raw]
    instructions = params.get("instructions")
    if isinstance(instructions, str) and instructions:
        items.insert(0, {"role": "system", "content": instructions})
    return items


def tool_specs(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The function tools the row offers the model."""
    tools = row["responses_create_params"].get("tools") or []
    return [t for t in tools if isinstance(t, dict) and t.get("type", "function") == "function" and t.get("name")]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return json.dumps(content)


def chat_messages(items: Sequence[dict[str, Any]]) -> list[dict[str, str]]:
    """Responses API input items as chat messages (developer -> system; tool outputs as user turns)."""
    messages = []
    for item in items:
        kind = item.get("type", "message")
        if kind == "function_call_output":
            messages.append({"role": "user", "content": f"Tool result: {item.get('output', '')}"})
        elif "role" in item:
            role = "system" if item["role"] == "developer" else str(item["role"])
            messages.append({"role": role, "content": _text(item.get("content", ""))})
        else:
            messages.append({"role": "user", "content": json.dumps(item)})
    return messages


def tool_prompt(tools: Sequence[dict[str, Any]]) -> str:
    """How a chat model is told about the row's tools and the <tool_call> syntax the codec parses."""
    lines = [
        json.dumps({"name": t["name"], "description": t.get("description", ""), "parameters": t.get("parameters", {})})
        for t in tools
    ]
    return TOOL_PROMPT.format(tools="\n".join(lines))
