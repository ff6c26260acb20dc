"""A question/answer dataset as a single-turn step environment judged by a named judge."""

from __future__ import annotations

import random
from importlib.metadata import version
from typing import TYPE_CHECKING, Any

from nenyax.adapters.datasets.golds import ChoiceGold
from nenyax.adapters.datasets.loading import (
    ANSWER_COLUMNS,
    CHOICE_COLUMNS,
    PROMPT_COLUMNS,
    content_digest,
    load_table,
    pick_column,
)
from nenyax.adapters.datasets.reference import (
    SHOWN_BAD_ROWS,
    BadRow,
    BadValue,
    Gold,
    Options,
    as_text,
    read_golds,
    read_options,
    read_questions,
)
from nenyax.core import Manifest, Mode, Split, StepEnvironment
from nenyax.core.errors import BadURIError, VerifierFailure
from nenyax.core.toolkit.qa import ANSWER_RULES, QuestionSession, question_capabilities

if TYPE_CHECKING:
    from nenyax.adapters.datasets.options import DatasetSpec


class DatasetEnvironment(StepEnvironment):
    """One split of a local dataset; task ids ``<split>/<row>`` or ``<split>/<id column value>``.

    Every row is validated at load. A row without a question is an error naming it. A row whose gold
    answer is null, empty or missing is a *bad row*: it is not a task (`task_ids` leaves it out, so
    `check` never samples it), and it is listed in `bad_rows` and in the manifest's ``extra["bad_rows"]``.
    So is a row whose gold the judge cannot read (its ``unreadable_gold``: a word under ``numeric``, a
    non-label under ``choice``), and one whose options cell is unusable.

    With a choices column (``?choices_column=``, or ``choices``/``options`` under ``judge=choice``) each
    question is shown with its options (``A. Mercury``), and the judge gets a `ChoiceGold` carrying them.
    """

    def __init__(self, uri: str, spec: DatasetSpec, judge: Any) -> None:
        """Load and validate the split now, so a bad file or column fails at load with what exists instead."""
        self.spec = spec
        self.judge_plugin = judge
        self.table = load_table(spec.path, spec.split)
        self.split = self.table.split
        columns = self.table.columns
        self.prompt_column = pick_column(columns, spec.prompt_column, PROMPT_COLUMNS, "prompt", "prompt_column")
        self.answer_column = pick_column(columns, spec.answer_column, ANSWER_COLUMNS, "answer", "answer_column")
        self.id_column = (
            pick_column(columns, spec.id_column, (), "id", "id_column") if spec.id_column is not None else None
        )
        self.choices_column = self._choices_column(columns)
        self.row_ids = row_ids = self._row_ids()
        """Every row's task id, bad rows included."""
        self.questions = read_questions(self.table, self.prompt_column)
        self.options = self._options()
        self.golds, bad = read_golds(self.table, self.answer_column, row_ids, self._gold_problem)
        self.bad_rows: tuple[BadRow, ...] = tuple(bad)
        """Rows whose gold answer is unusable (null, empty, missing), in file order; none of them is a task."""
        self._bad = {row.task_id: row for row in bad}
        self._ids = [task for task, gold in zip(row_ids, self.golds, strict=True) if gold is not None]
        self._rows = {task: index for index, task in enumerate(row_ids)}
        name = spec.path.name
        described = (
            f"Questions from the {self.prompt_column!r} column of {name}, answers judged against "
            f"{self.answer_column!r} by the {spec.judge!r} judge."
        )
        if bad:
            described += (
                f" {len(bad)} of {self.table.size} rows have no usable gold answer and are not tasks; "
                f"the first: {bad[0].sentence}"
            )
        super().__init__(
            Manifest(
                uri=uri,
                format="hf",
                format_version=version("datasets"),
                mode=Mode.STEP,
                name=name,
                description=described,
                splits=(Split(name=self.split, count=len(self._ids)),),
                observation="The question, as text.",
                action=ANSWER_RULES,
                score_range=(0.0, 1.0),
                extra={
                    # The file by name and content: an absolute path would make the digest differ between machines.
                    "file": spec.path.name,
                    "content": content_digest(spec.path),
                    "columns": list(columns),
                    "prompt_column": self.prompt_column,
                    "answer_column": self.answer_column,
                    "id_column": self.id_column,
                    "choices_column": self.choices_column,
                    "judge": spec.judge,
                    "judge_options": spec.judge_options,
                    "rows": self.table.size,
                    "bad_rows": {
                        "count": len(bad),
                        "first": [row.sentence for row in bad[:SHOWN_BAD_ROWS]],
                    },
                },
                capabilities=question_capabilities(seeded=False, reference_policy=True),
            )
        )

    def _choices_column(self, columns: tuple[str, ...]) -> str | None:
        if self.spec.choices_column is not None:
            return pick_column(columns, self.spec.choices_column, (), "choices", "choices_column")
        if self.spec.judge == "choice":  # only the choice judge looks for options it was not told about
            return next((name for name in CHOICE_COLUMNS if name in columns), None)
        return None

    def _options(self) -> list[Options | BadValue]:
        """Every row's options (or why its cell holds none); empty when there is no choices column."""
        if self.choices_column is None:
            return [() for _ in range(self.table.size)]
        read: list[Options | BadValue] = []
        for value in self.table.column(self.choices_column):
            try:
                read.append(read_options(value, self.choices_column))
            except BadValue as exc:
                read.append(exc)
        return read

    def references(self, index: int) -> tuple[Gold | ChoiceGold, ...]:
        """What the judge compares row `index`'s answer with: its golds, each with the row's options if any."""
        golds = self.golds[index] or ()
        options = self.options[index]
        if not options or isinstance(options, BadValue):
            return golds
        return tuple(ChoiceGold(str(gold), options) for gold in golds)

    def gold_answer(self, reference: Gold | ChoiceGold) -> str:
        """What the reference policy answers: the judge's own answer for the gold (``gold_answer``), else its text."""
        answer = getattr(self.judge_plugin, "gold_answer", None)
        return str(answer(reference)) if answer is not None else str(reference)

    def _gold_problem(self, index: int, golds: tuple[Gold, ...]) -> str | None:
        """Why row `index` is no task for this judge (its options, or a gold the judge cannot read), or None."""
        options = self.options[index]
        if isinstance(options, BadValue):
            return str(options)
        unreadable = getattr(self.judge_plugin, "unreadable_gold", None)
        if unreadable is None:  # a third-party judge that does not say: its golds are judged as they come
            return None
        references = golds if not options else tuple(ChoiceGold(str(gold), options) for gold in golds)
        for reference in references:
            try:
                problem = unreadable(reference)
            except VerifierFailure as exc:  # reading it took too long, or a number is too large to compute
                return f"a gold answer the {self.spec.judge} judge cannot read: {str(exc).rstrip('.')}"
            if problem is not None:
                return str(problem)
        return None

    def _row_ids(self) -> list[str]:
        if self.id_column is None:
            return [f"{self.split}/{i}" for i in range(self.table.size)]
        ids = []
        for index, value in enumerate(self.table.column(self.id_column)):
            try:
                ids.append(f"{self.split}/{as_text(value, self.id_column)}")
            except BadValue as exc:
                where = self.table.where(index)
                msg = (
                    f"{where[0].upper()}{where[1:]} has {exc}, so it cannot name its task; fill it or drop ?id_column."
                )
                raise BadURIError(msg) from None
        if len(set(ids)) != len(ids):
            msg = f"The id column {self.id_column!r} repeats values, so it cannot name tasks; drop ?id_column."
            raise BadURIError(msg)
        return ids

    def task_ids(self, split: str | None = None, limit: int | None = None) -> list[str]:
        """The task id of every row with a usable gold answer, in file order (bad rows are not tasks)."""
        if split not in (None, self.split):
            msg = f"This environment serves the split {self.split!r}, not {split!r}; load it with ?split={split}."
            raise BadURIError(msg)
        return self._ids if limit is None else self._ids[:limit]

    def session(self, task: str | None = None, seed: int | None = None) -> DatasetSession:
        """Open `task`; without one, the task picked by `seed` (or the first task)."""
        if task is not None:
            if task in self._bad:
                msg = f"{task!r} is not a task: {self._bad[task].sentence[:-1]}; fix that row to use it."
                raise BadURIError(msg)
            if task not in self._rows:
                msg = f"{task!r} is not a task of {self.spec.path.name}; task ids look like {self._ids[0]!r}."
                raise BadURIError(msg)
            index = self._rows[task]
        else:
            pick = 0 if seed is None else random.Random(seed).randrange(len(self._ids))
            index = self._rows[self._ids[pick]]
        return DatasetSession(self, index, seed)


class DatasetSession(QuestionSession):
    """One row's question, judged against its gold answer (or the best of several)."""

    def __init__(self, env: DatasetEnvironment, index: int, seed: int | None) -> None:
        """Read the row (validated at load: it has a question and at least one gold answer)."""
        self.index = index
        options = env.options[index]
        references = env.references(index)  # never empty: bad rows are refused before a session opens
        question = env.questions[index]
        if options and not isinstance(options, BadValue):
            question += "\n\n" + "\n".join(f"{label}. {text}" for label, text in options)
        super().__init__(
            task_id=env.row_ids[index],
            seed=seed,
            question=question,
            system_prompt=env.spec.system_prompt,
            judge=env.judge_plugin,
            judge_name=repr(env.spec.judge),
            references=references,
            gold=env.gold_answer(references[0]),
        )
