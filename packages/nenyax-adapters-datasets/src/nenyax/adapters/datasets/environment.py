"""A question/answer dataset as a single-turn step environment judged by a named judge."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from nenyax.adapters.datasets.answers import gold_answer
from nenyax.adapters.datasets.loading import ANSWER_COLUMNS, PROMPT_COLUMNS, content_digest, load_local, pick_column
from nenyax.core.contract.manifest import Capabilities, Manifest, Mode, Split
from nenyax.core.engine.answers import ANSWER_RULES
from nenyax.core.engine.environment import StepEnvironment
from nenyax.core.engine.qa import QuestionSession
from nenyax.core.errors import BadURIError

if TYPE_CHECKING:
    from nenyax.adapters.datasets.spec import DatasetSpec


class DatasetEnvironment(StepEnvironment):
    """One split of a local dataset; task ids ``<split>/<row>`` or ``<split>/<id column value>``."""

    def __init__(self, uri: str, spec: DatasetSpec, judge: Any) -> None:
        """Load the split now, so a missing file or column fails at load with what exists instead."""
        import datasets

        self.spec = spec
        self.judge_plugin = judge
        self.dataset, self.split = load_local(spec.path, spec.split)
        self.prompt_column = pick_column(self.dataset, spec.prompt_column, PROMPT_COLUMNS, "prompt", "prompt_column")
        self.answer_column = pick_column(self.dataset, spec.answer_column, ANSWER_COLUMNS, "answer", "answer_column")
        self.id_column = (
            pick_column(self.dataset, spec.id_column, (), "id", "id_column") if spec.id_column is not None else None
        )
        self._ids = self._task_ids()
        self._rows = {task: index for index, task in enumerate(self._ids)}
        super().__init__(
            Manifest(
                uri=uri,
                format="hf",
                format_version=datasets.__version__,
                mode=Mode.STEP,
                name=spec.path.name,
                description=f"Questions from the {self.prompt_column!r} column of {spec.path.name}, "
                f"answers judged against {self.answer_column!r} by the {spec.judge!r} judge.",
                splits=(Split(name=self.split, count=len(self.dataset)),),
                observation="The question, as text.",
                action=ANSWER_RULES,
                score_range=(0.0, 1.0),
                extra={
                    "path": str(spec.path.resolve()),
                    "content": content_digest(spec.path),
                    "columns": list(self.dataset.column_names),
                    "prompt_column": self.prompt_column,
                    "answer_column": self.answer_column,
                    "id_column": self.id_column,
                    "judge": spec.judge,
                    "judge_options": spec.judge_options,
                },
                capabilities=Capabilities(
                    seeded=False,
                    stable_task_ids=True,
                    reference_policy=True,
                    multi_turn=False,
                    max_turns=1,
                ),
            )
        )

    def _task_ids(self) -> list[str]:
        if self.id_column is None:
            return [f"{self.split}/{i}" for i in range(len(self.dataset))]
        ids = [f"{self.split}/{value}" for value in self.dataset[self.id_column]]
        if len(set(ids)) != len(ids):
            msg = f"The id column {self.id_column!r} repeats values, so it cannot name tasks; drop ?id_column."
            raise BadURIError(msg)
        return ids

    def task_ids(self, split: str | None = None, limit: int | None = None) -> list[str]:
        """Every row's task id, in file order."""
        if split not in (None, self.split):
            msg = f"This environment serves the split {self.split!r}, not {split!r}; load it with ?split={split}."
            raise BadURIError(msg)
        return self._ids if limit is None else self._ids[:limit]

    def session(self, task: str | None = None, seed: int | None = None) -> DatasetSession:
        """Open `task`; without one, the row picked by `seed` (or the first row)."""
        if task is not None:
            if task not in self._rows:
                msg = f"{task!r} is not a task of {self.spec.path.name}; task ids look like {self._ids[0]!r}."
                raise BadURIError(msg)
            index = self._rows[task]
        else:
            index = 0 if seed is None else random.Random(seed).randrange(len(self._ids))
        return DatasetSession(self, index, seed)


class DatasetSession(QuestionSession):
    """One row's question, judged against its gold answer (or any of several)."""

    def __init__(self, env: DatasetEnvironment, index: int, seed: int | None) -> None:
        """Read the row."""
        self.index = index
        self.row = env.dataset[index]
        gold = gold_answer(self.row[env.answer_column])
        golds = gold if isinstance(gold, list) else [gold]
        super().__init__(
            task_id=env.task_ids()[index],
            seed=seed,
            question=str(self.row[env.prompt_column]),
            system_prompt=env.spec.system_prompt,
            judge=env.judge_plugin,
            judge_name=repr(env.spec.judge),
            references=golds,
            gold=golds[0] if golds else None,
            why_no_gold=f"Row {index} of {env.spec.path.name} has no gold answer.",
        )
