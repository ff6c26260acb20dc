"""Gold answers and questions as the user wrote them, validated row by row before anything is trusted.

A gold cell is text: ``NA``, ``007``, ``3.10``, ``True`` and ``1e3`` stay exactly that (text files are
read without guessing, see `textfiles`); a number or boolean from a typed file (Parquet, save_to_disk)
is written the usual way (``7``, ``3.1``, ``true``). The final answer in a cell is what follows
``####`` (GSM8K), else the last ``\\boxed{}`` (MATH), else the whole cell.

**Several acceptable answers** are a list cell: a JSON array, or a list column of a typed file. Every
item is read like a cell of its own, a reply scores the best of its judgments against the items, and
the reference policy answers the first. **A list of lists** (an ARC grid, ``[[1, 2], [3, 4]]``) is one
answer that is a list (`golds.ListGold`), judged item by item. An empty list, a list with a null or
empty item, or one that mixes answers and lists, is a bad gold row, like a null, empty or missing cell.
A CSV cell is always one answer: ``[1, 2]`` in a CSV is the text ``[1, 2]``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

import attrs

from nenyax.adapters.datasets.golds import ListGold, Nested
from nenyax.adapters.datasets.loading import MISSING, Table
from nenyax.core.errors import BadURIError
from nenyax.core.toolkit.qa import last_boxed

# GSM8K-style gold answers put the worked solution first and the final answer after "####".
_HASHES = re.compile(r"####\s*(.*?)\s*$", re.DOTALL)
SHOWN_BAD_ROWS = 20
"""Bad rows named in the manifest (all of them are on the environment's `bad_rows`)."""


class BadValue(Exception):
    """A cell that holds no usable value; the message says what it holds (``an empty 'answer'``)."""


@attrs.frozen
class BadRow:
    """A row whose gold answer is unusable: left out of the tasks, named in the manifest and by `check`."""

    task_id: str
    """The id the row would have had, e.g. ``train/2``."""
    row: int
    """Its index among the split's rows, counting from 0."""
    line: int | None
    """The line of the file it starts on (CSV, JSON Lines), else None."""
    problem: str
    """What the gold cell holds, e.g. ``an empty 'answer'``."""
    where: str
    """``line 4 of qa.csv`` or ``row 3 of qa.parquet``."""

    @property
    def sentence(self) -> str:
        """``Line 4 of qa.csv (task train/2) has an empty 'answer'.``"""
        counted = "" if self.line is not None else ", rows counted from 0"
        return f"{self.where[0].upper()}{self.where[1:]} (task {self.task_id}{counted}) has {self.problem}."


def as_text(value: Any, column: str) -> str:
    """A scalar cell as text, or `BadValue` saying why it is none."""
    if value is MISSING:
        raise BadValue(f"no {column!r} field")
    if value is None:
        raise BadValue(f"a null {column!r}")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and math.isnan(value):
        raise BadValue(f"a NaN {column!r} (a missing value)")
    if isinstance(value, dict):
        raise BadValue(f"an object in {column!r}, not text")
    if isinstance(value, list | tuple):
        raise BadValue(f"a nested list in {column!r}")
    text = str(value)
    if not text.strip():
        raise BadValue(f"an empty {column!r}")
    return text


def final_answer(text: str, column: str) -> str:
    """The final answer in a gold cell's text: after ``####``, else the last ``\\boxed{}``, else the cell."""
    hashes = _HASHES.search(text)
    if hashes:
        found, where = hashes.group(1).strip(), "after '####'"
    else:
        boxed = last_boxed(text)
        found, where = (boxed, "in its last \\boxed{}") if boxed is not None else (text.strip(), "")
    if not found:
        raise BadValue(f"an {column!r} with nothing {where}")
    return found


Gold = str | ListGold
"""One acceptable answer: a text, or a list (a grid)."""


def _nested(value: Any, column: str) -> Nested:
    if not value:
        raise BadValue(f"an empty list in {column!r}")
    return tuple(_nested(item, column) if isinstance(item, list | tuple) else as_text(item, column) for item in value)


def gold_answers(value: Any, column: str) -> tuple[Gold, ...]:
    """The acceptable answers in a gold cell (one, a list's items, or one list of lists), or `BadValue`."""
    if isinstance(value, list | tuple):
        if not value:
            raise BadValue(f"an empty list in {column!r}")
        nested = [isinstance(item, list | tuple) for item in value]
        if all(nested):  # a grid: one answer that is a list, not several answers
            try:
                return (ListGold(_nested(value, column)),)
            except BadValue as exc:
                raise BadValue(f"a list of lists in {column!r} holding {exc}") from None
        if any(nested):
            raise BadValue(f"a list in {column!r} that mixes answers and lists (a grid is a list of lists only)")
        try:
            return tuple(final_answer(as_text(item, column), column) for item in value)
        except BadValue as exc:
            raise BadValue(f"a list in {column!r} holding {exc}") from None
    return (final_answer(as_text(value, column), column),)


GoldCheck = Callable[[int, tuple[Gold, ...]], "str | None"]
"""What makes row `index`'s golds unusable for the judge in use (a phrase after "has"), or None."""


def read_golds(
    table: Table, column: str, task_ids: list[str], check: GoldCheck | None = None
) -> tuple[list[tuple[Gold, ...] | None], list[BadRow]]:
    """Every row's acceptable answers (None for a bad row), and the bad rows; all rows bad is an error.

    `check` makes a row whose golds the judge cannot read (or whose options are unusable) a bad row too.
    """
    golds: list[tuple[Gold, ...] | None] = []
    bad: list[BadRow] = []
    refused = 0  # bad rows whose gold was read but refused by `check`
    for index, value in enumerate(table.column(column)):
        try:
            answers = gold_answers(value, column)
            problem = check(index, answers) if check is not None else None
            if problem is not None:
                refused += 1
                raise BadValue(problem)
            golds.append(answers)
        except BadValue as exc:
            golds.append(None)
            line = table.lines[index] if table.lines is not None else None
            bad.append(
                BadRow(task_id=task_ids[index], row=index, line=line, problem=str(exc), where=table.where(index))
            )
    if len(bad) == table.size:
        first = bad[0].sentence[:-1]
        if refused == len(bad):  # every gold was read, and the judge can read none of them
            msg = f"No row of {table.name} has a usable gold answer ({first}, and so on); choose another ?judge=."
        else:
            msg = (
                f"No row of {table.name} has a gold answer in its {column!r} column ({first}, and so on); "
                "name the answer column with ?answer_column=<column>."
            )
        raise BadURIError(msg)
    return golds, bad


Options = tuple[tuple[str, str], ...]
"""A task's options as (label, text) pairs, in order."""
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def read_options(value: Any, column: str) -> Options:
    """A cell's options: a list of texts (labelled A, B, ...), ``{"label": [...], "text": [...]}`` (ARC,
    CommonsenseQA), or ``{"A": text, ...}``; JSON text in a CSV cell too. `BadValue` for anything else."""
    if isinstance(value, str) and value.strip()[:1] in ("[", "{"):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise BadValue(f"a {column!r} that is not valid JSON") from None
    if isinstance(value, dict) and set(value) >= {"label", "text"}:
        labels, texts = value["label"], value["text"]
        if not isinstance(labels, list | tuple) or not isinstance(texts, list | tuple) or len(labels) != len(texts):
            raise BadValue(f"a {column!r} whose labels and texts differ in number")
        pairs = list(zip(labels, texts, strict=True))
    elif isinstance(value, dict):
        pairs = list(value.items())
    elif isinstance(value, list | tuple):
        if len(value) > len(_LETTERS):
            raise BadValue(f"more than {len(_LETTERS)} options in {column!r}")
        pairs = list(zip(_LETTERS, value, strict=False))
    else:
        raise BadValue(f"no list of options in {column!r}")
    if not pairs:
        raise BadValue(f"no options in {column!r}")
    options = tuple((as_text(label, column), as_text(text, column)) for label, text in pairs)
    if len({label.upper() for label, _text in options}) != len(options):
        raise BadValue(f"options in {column!r} that repeat a label")
    return options


def read_questions(table: Table, column: str) -> list[str]:
    """Every row's question; a row without one is an error naming it (and how many more there are)."""
    questions: list[str] = []
    bad: list[tuple[int, str]] = []
    for index, value in enumerate(table.column(column)):
        try:
            questions.append(as_text(value, column) if not isinstance(value, list | dict) else str(value))
        except BadValue as exc:
            bad.append((index, str(exc)))
    if bad:
        index, problem = bad[0]
        where = table.where(index) + (" (counting from 0)" if table.lines is None else "")
        more = f" ({len(bad) - 1} more rows lack one too)" if len(bad) > 1 else ""
        msg = (
            f"{where[0].upper()}{where[1:]} has {problem}, so it has no question{more}; "
            "fix the file or name the question column with ?prompt_column=<column>."
        )
        raise BadURIError(msg)
    return questions
