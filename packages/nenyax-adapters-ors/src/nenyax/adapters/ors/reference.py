"""Which tool takes an answer, and which task field holds the honest one: what the built-in policies play.

ORS has no oracle in its protocol. Many of its environments are questions with a ``submit``-like tool
and tasks that carry their gold answer (the ors-sdk quickstart's ``MathEnv`` is one): then the
reference submits the gold, the null policy an empty answer, the random policy garbage.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from nenyax.adapters.ors.discovery import ServerInfo
from nenyax.adapters.ors.options import OrsSpec
from nenyax.core import BadURIError
from nenyax.core.toolkit.suggest import did_you_mean

ANSWER_KEYS = ("answer", "solution", "target", "gold", "ground_truth", "reference", "label")
"""Task fields read as the gold answer, first present in every task wins (``?answer_key=`` names another)."""


@attrs.frozen
class AnswerTool:
    """A tool whose one string argument is an answer (`arg` None: a terminal tool that takes none)."""

    name: str
    arg: str | None


@attrs.frozen
class Answers:
    """What the built-in policies can play, and why not where they cannot."""

    tool: AnswerTool | None
    key: str | None
    why_not: str
    """Empty when both were found; else the sentence the manifest records."""

    @property
    def reference(self) -> bool:
        """True when the reference policy can play: a tool to answer with and a gold answer in every task."""
        return self.tool is not None and self.tool.arg is not None and self.key is not None


def string_argument(spec: dict[str, Any]) -> str | None:
    """The tool's only argument when it is a string (required or sole), else None."""
    schema = spec.get("input_schema") or {}
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict) or len(props) != 1:
        return None
    [(name, prop)] = props.items()
    return name if isinstance(prop, dict) and prop.get("type") == "string" else None


def _tool(spec: OrsSpec, info: ServerInfo) -> tuple[AnswerTool | None, str]:
    by_name = {t["name"]: t for t in info.tools if isinstance(t.get("name"), str)}
    wanted = spec.answer_tool or spec.terminal_tool
    terminal = info.terminal_tool
    if wanted is not None:
        if terminal is not None and wanted == terminal["name"]:
            return AnswerTool(wanted, terminal.get("arg")), ""
        if wanted not in by_name:
            msg = f"{info.env} has no tool {wanted!r}." + did_you_mean(wanted, by_name, "tool")
            raise BadURIError(msg)
        arg = string_argument(by_name[wanted])
        if arg is None:
            msg = f"The tool {wanted!r} of {info.env} takes no single string argument, so it cannot take an answer."
            raise BadURIError(msg)
        return AnswerTool(wanted, arg), ""
    if terminal is not None:
        return AnswerTool(terminal["name"], terminal.get("arg")), ""
    fits = [name for name, t in by_name.items() if string_argument(t) is not None]
    if len(fits) == 1:
        return AnswerTool(fits[0], string_argument(by_name[fits[0]])), ""
    if not fits:
        return None, "No tool takes a single string answer, so there is no built-in policy to play."
    return None, f"Several tools take one string ({', '.join(fits)}); name the answer tool with ?answer_tool=."


def _key(spec: OrsSpec, tasks: Sequence[Any] | None) -> tuple[str | None, str]:
    if tasks is None:
        return None, "The server does not list its tasks, so no gold answer is known."
    specs = [t for t in tasks if isinstance(t, dict)]
    if len(specs) != len(tasks) or not specs:
        return None, "The tasks are not JSON objects with fields, so no gold answer is known."
    if spec.answer_key is not None:
        missing = sum(spec.answer_key not in t for t in specs)
        if missing:
            fields = sorted({k for t in specs for k in t})
            msg = f"{missing} task(s) lack the field {spec.answer_key!r}." + did_you_mean(
                spec.answer_key, fields, "field"
            )
            raise BadURIError(msg)
        return spec.answer_key, ""
    for key in ANSWER_KEYS:
        if all(t.get(key) not in (None, "") for t in specs):
            return key, ""
    return None, f"No task field holds a gold answer ({', '.join(ANSWER_KEYS)}); name one with ?answer_key=."


def find_answers(spec: OrsSpec, info: ServerInfo, tasks: Sequence[Any] | None) -> Answers:
    """The answer tool and gold field of `tasks` (every split served), with the reason for any missing."""
    tool, why_tool = _tool(spec, info)
    key, why_key = _key(spec, tasks)
    if tool is not None and tool.arg is None and key is not None:
        why_tool = f"The terminal tool {tool.name!r} takes no argument, so it cannot be given the gold answer."
    return Answers(tool=tool, key=key, why_not=" ".join(w for w in (why_tool, why_key) if w))
