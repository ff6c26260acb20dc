"""The text codec: how a chat model reads a gymnasium observation and writes an action.

The model is told what the action space accepts and answers with the action inside
``<action></action>``: a JSON value in the space's plain layout (`spaces.to_json(..., plain=True)`: an
integer, a list, an object), an action's name where the env's actions have names, or raw text for a ``Text`` space.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import numpy as np

from gymnasium import spaces
from nenyax.adapters.gymnasium.spaces import SUPPORTED, coerce_action, from_json, null_action, to_json
from nenyax.core.errors import PolicyFailure
from nenyax.core.toolkit.codec import candidates, clip, reply_text

MAX_TEXT_ELEMENTS = 1024
"""Largest observation (in numbers) the codec writes out; an image of thousands of pixels is not text."""

_INTEGER = re.compile(r"-?\d+")


def size(space: spaces.Space[Any]) -> int:
    """How many numbers (or strings) a value of `space` holds."""
    if isinstance(space, spaces.Box | spaces.MultiDiscrete | spaces.MultiBinary):
        return int(np.prod(space.shape))
    if isinstance(space, spaces.Tuple):
        return sum(size(s) for s in space.spaces)
    if isinstance(space, spaces.Dict):
        return sum(size(s) for s in space.spaces.values())
    return 1


def _unsupported(space: spaces.Space[Any]) -> str | None:
    if not isinstance(space, SUPPORTED):
        return type(space).__name__
    parts = space.spaces.values() if isinstance(space, spaces.Dict) else getattr(space, "spaces", ())
    if isinstance(space, spaces.Tuple | spaces.Dict):
        for sub in parts:
            found = _unsupported(sub)
            if found:
                return found
    return None


def codec_problem(observation_space: spaces.Space[Any], action_space: spaces.Space[Any]) -> str | None:
    """Why the text codec cannot serve these spaces (one sentence), or None when it can."""
    for role, space in (("observation", observation_space), ("action", action_space)):
        kind = _unsupported(space)
        if kind:
            return f"The text codec cannot render the {kind} {role} space {space}; play it with a native policy."
    if size(observation_space) > MAX_TEXT_ELEMENTS:
        return (
            f"The observation space {observation_space} holds {size(observation_space)} numbers, too many for the "
            f"text codec (at most {MAX_TEXT_ELEMENTS}); play it with a native policy."
        )
    return None


def _number(x: float) -> str:
    return f"{x:g}"


def describe(space: spaces.Space[Any], meanings: tuple[str, ...] | None = None, nested: bool = False) -> str:
    """What a valid value of `space` looks like, in words a model can follow."""
    if isinstance(space, spaces.Discrete):
        low, high = int(space.start), int(space.start + space.n - 1)
        text = f"one integer from {low} to {high}"
        if meanings:
            names = ", ".join(f"{low + i} = {name}" for i, name in enumerate(meanings))
            text += f" ({names}; the name alone also works)"
        return text
    if isinstance(space, spaces.Box):
        whole = "whole numbers" if np.issubdtype(space.dtype, np.integer) else "numbers"
        lows, highs = np.unique(space.low), np.unique(space.high)
        if lows.size == 1 and highs.size == 1:
            bounds = f"each from {_number(float(lows[0]))} to {_number(float(highs[0]))}"
        else:
            bounds = (
                f"with lower bounds {json.dumps(space.low.tolist())} and upper bounds {json.dumps(space.high.tolist())}"
            )
        if space.shape in ((), (1,)) and not nested:
            single = bounds.replace("each from", "from")
            return f"one number {single}" if whole == "numbers" else f"one whole number {single}"
        return f"a JSON array of shape {list(space.shape)} of {whole}, {bounds}"
    if isinstance(space, spaces.MultiDiscrete):
        ranges = ", ".join(
            f"{int(s)}..{int(s + n - 1)}" for s, n in zip(space.start.flat, space.nvec.flat, strict=True)
        )
        return f"a JSON array of shape {list(space.shape)} of integers, in order within {ranges}"
    if isinstance(space, spaces.MultiBinary):
        return f"a JSON array of shape {list(space.shape)} of 0s and 1s"
    if isinstance(space, spaces.Text):
        charset = "".join(sorted(space.character_set))
        what = "a JSON string" if nested else "plain text (no quotes)"
        return f"{what} of {space.min_length} to {space.max_length} characters from {charset!r}"
    if isinstance(space, spaces.Tuple):
        items = "; ".join(f"item {i}: {describe(s, nested=True)}" for i, s in enumerate(space.spaces))
        return f"a JSON array of {len(space.spaces)} items ({items})"
    if isinstance(space, spaces.Dict):
        keys = "; ".join(f"{k!r}: {describe(s, nested=True)}" for k, s in space.spaces.items())
        return f"a JSON object with exactly these keys ({keys})"
    return str(space)


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return float(f"{value:.4g}") if math.isfinite(value) else str(value)
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return value


def format_value(space: spaces.Space[Any], value: Any) -> str:
    """`value` as compact text: JSON with floats to 4 significant digits."""
    data = to_json(space, value, plain=True)  # numbers as lists: a model reads them, not core's array records
    return json.dumps(_rounded(data), separators=(", ", ": "))


def example(space: spaces.Space[Any], meanings: tuple[str, ...] | None = None) -> str:
    """A valid reply for `space` (its null action), as the model should write it."""
    value = null_action(space)
    if isinstance(space, spaces.Text):
        return str(value)
    if isinstance(space, spaces.Box) and space.shape in ((), (1,)):
        return format_value(spaces.Box(-np.inf, np.inf, (), space.dtype), np.asarray(value).reshape(()))
    return format_value(space, value)


def _read(space: spaces.Space[Any], candidate: str, meanings: tuple[str, ...] | None) -> Any:
    """The native action `candidate` spells; ValueError when it spells none."""
    if isinstance(space, spaces.Text):
        return candidate
    if isinstance(space, spaces.Discrete) and meanings:
        word = candidate.strip(" .`'\"").lower()
        if word in meanings:
            return np.int64(space.start + meanings.index(word))
    try:
        value = json.loads(candidate)
    except json.JSONDecodeError:
        if isinstance(space, spaces.Discrete):
            found = _INTEGER.findall(candidate)
            if found:
                return np.int64(int(found[-1]))
        raise ValueError(candidate) from None
    if isinstance(space, spaces.Box) and space.shape in ((), (1,)) and isinstance(value, int | float):
        value = value if space.shape == () else [value]
    return from_json(space, value)


def parse(space: spaces.Space[Any], text: str, meanings: tuple[str, ...] | None = None) -> Any:
    """The native action a model's reply names; `PolicyFailure` (one sentence) when it names none."""
    reason = "no action was found"
    for candidate in candidates(reply_text(text))[0]:
        if not candidate:
            continue
        try:
            native = _read(space, candidate, meanings)
        except (ValueError, TypeError, KeyError):
            continue
        try:
            return coerce_action(space, native)[0]
        except PolicyFailure:
            reason = f"{clip(candidate)} is outside the action space"
            continue
    expected = describe(space, meanings)
    msg = f"Could not read an action from the reply ({reason}); expected {expected} inside <action></action>."
    raise PolicyFailure(msg)
