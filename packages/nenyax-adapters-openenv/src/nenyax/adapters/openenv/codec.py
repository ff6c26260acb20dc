"""The text codec: how a chat model reads an OpenEnv observation and writes an action.

The system prompt names the environment (``/metadata``), the observation's fields and the action's
fields from ``/schema``; each turn shows the observation as JSON and the last reward. The model
answers with the action as a JSON object inside ``<action></action>``. For an action of exactly
one field, the bare value is accepted too (``<action>42</action>``). The parsed action is validated
against the action schema before it is sent; `PolicyFailure` says what was wrong.
"""

from __future__ import annotations

import json
from typing import Any

from nenyax.adapters.openenv.instances import Unbuildable
from nenyax.adapters.openenv.schema import ActionSchema
from nenyax.core import PolicyFailure
from nenyax.core.toolkit.codec import candidates, clip, reply_text

OBSERVATION_BOOKKEEPING = frozenset({"done", "reward", "metadata"})
"""Observation schema fields the wire lifts out of the observation (shown separately or not at all)."""


def observation_fields(schema: dict[str, Any]) -> str:
    """The observation's own fields in words, from its JSON schema."""
    props = schema.get("properties", {}) if isinstance(schema, dict) else {}
    parts = []
    for name, prop in props.items():
        if name in OBSERVATION_BOOKKEEPING or not isinstance(prop, dict):
            continue
        options = [o for o in prop.get("anyOf", []) if isinstance(o, dict)]
        kind = prop.get("type") or " or ".join(str(o.get("type", "?")) for o in options)
        about = str(prop.get("description", "")).strip()
        parts.append(f'"{name}" ({kind or "any"})' + (f": {about}" if about else ""))
    return "; ".join(parts)


def system_prompt(name: str, description: str, observation_schema: dict[str, Any], action: ActionSchema) -> str:
    """The first message of an episode: what the environment is and how to answer."""
    about = f" {description.strip()}" if description.strip() else ""
    fields = observation_fields(observation_schema)
    seen = f"a JSON object with {fields}" if fields else "a JSON object"
    try:
        null = action.null_instance()
    except Unbuildable:  # the schema's own words have to do
        null = None
    example = "" if null is None else f"\nFor example: <action>{json.dumps(null)}</action>"
    if null is not None and len(action.fields) == 1:
        value = json.dumps(next(iter(null.values()), 0))
        example += f" (the bare value, e.g. <action>{value}</action>, also works)"
    return (
        f"You act in the OpenEnv environment {name}.{about}\n"
        f"Each turn you see the observation, {seen}, and the reward your last action earned; "
        "maximise the total reward.\n"
        f"Reply with your action inside <action></action>: {action.describe()}.{example}"
    )


def observation_message(observation: dict[str, Any], last_reward: float | None) -> str:
    """One turn's user message: the last reward and the observation as JSON."""
    parts = [] if last_reward is None else [f"Reward for your last action: {last_reward:g}."]
    parts.append("Observation: " + json.dumps(observation, ensure_ascii=False, separators=(", ", ": ")))
    return "\n".join(parts)


def parse(action: ActionSchema, text: str) -> dict[str, Any]:
    """The action a model's reply names, validated; `PolicyFailure` in one sentence when there is none."""
    first_problem = None
    found, tagged = candidates(reply_text(text), objects=True)
    single = next(iter(action.fields.values())) if len(action.fields) == 1 else None
    text_field = single is not None and action.resolve(single).get("type") == "string"
    for candidate in found:
        if not candidate:
            continue
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            if text_field:
                value = candidate  # plain text for an action of one string field
            elif tagged:
                first_problem = f"{clip(candidate)} is not JSON"
                continue
            else:
                continue
        wrapped = action.wrap(value)
        problems = action.problems(wrapped)
        if not problems:
            return wrapped  # type: ignore[no-any-return]
        first_problem = first_problem or f"{clip(candidate)} does not fit the action schema ({problems[0]})"
    reason = first_problem or "no JSON action was found"
    msg = f"Could not read an action from the reply: {reason}; expected {action.describe()} inside <action></action>."
    raise PolicyFailure(msg)
