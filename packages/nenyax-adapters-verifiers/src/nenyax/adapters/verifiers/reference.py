"""The reference reply: the task's gold answer, written so that the environment's own parser reads it back.

Legacy environments parse replies with a `Parser` (plain text, ``\\boxed{}`` through `extract_boxed_answer`,
XML fields, a ``<think>`` block first...). Rather than knowing every parser, the candidates below are
tried in order and the first one the parser reads back as the gold answer is the reply. v1 tasks have
no parser (their rewards read ``trace.last_reply``); most grade a boxed answer, so that is the default,
and ``?reference=...`` says otherwise.
"""

from __future__ import annotations

from typing import Any

DEFAULT_V1 = "\\boxed{{gold}}"
"""The v1 default template: `vf.extract_boxed_answer` (the helper v1 math tasks grade with) reads it."""

_THINK = "<think>\nThe gold answer is known.\n</think>\n"


def fill(template: str, gold: str) -> str:
    """`template` with ``{gold}`` replaced by `gold` (a literal replace: ``\\boxed{{gold}}`` gives ``\\boxed{7}``)."""
    return template.replace("{gold}", gold)


def _xml(parser: Any, gold: str) -> list[str]:
    """Replies for an `XMLParser`: its answer field holding the gold answer, its other fields filled too."""
    fields = getattr(parser, "_fields", None)
    answer_field = getattr(parser, "answer_field", "answer")
    format_ = getattr(parser, "format", None)
    if not fields or not callable(format_):
        return [f"<{answer_field}>\n{gold}\n</{answer_field}>"]
    values = {}
    for field in fields:
        name = field[0] if isinstance(field, tuple) else field
        values[str(name)] = gold if name == answer_field else "The gold answer is known."
    try:
        return [str(format_(**values))]
    except Exception:  # noqa: BLE001 - a parser's own formatter may raise anything; fall back to plain tags
        return [f"<{answer_field}>\n{gold}\n</{answer_field}>"]


def candidates(parser: Any, gold: str) -> list[str]:
    """Replies to try, in order: the parser's own format, then boxed (what math parsers extract), plain, tagged."""
    found = _xml(parser, gold) if type(parser).__name__ == "XMLParser" else []
    plain = [f"\\boxed{{{gold}}}", gold, f"<answer>\n{gold}\n</answer>"]
    found += plain + [_THINK + reply for reply in plain]
    return list(dict.fromkeys(found))


def _same(parsed: Any, gold: str) -> bool:
    return isinstance(parsed, str) and parsed.strip() == gold.strip()


def _reads(parser: Any, reply: str, gold: str) -> bool:
    try:
        parsed = parser.parse_answer([{"role": "assistant", "content": reply}])
    except Exception:  # noqa: BLE001 - a parser that chokes on a candidate just rejects it
        return False
    return _same(parsed, gold)


def legacy_reply(parsers: list[Any], gold: str) -> str:
    """The first candidate every one of `parsers` reads back as `gold` (the plain answer when none is)."""
    for reply in candidates(parsers[0], gold):
        if all(_reads(parser, reply, gold) for parser in parsers):
            return reply
    return gold
