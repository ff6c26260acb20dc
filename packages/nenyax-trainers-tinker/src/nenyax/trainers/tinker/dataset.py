"""A Nenyax environment's tasks as tinker-cookbook's `RLDataset`, and the `RLDatasetBuilder` a training config names.

Each batch is `batch_size` tasks, in the environment's task order (``env.task_ids(split, limit)``), one
`NenyaxEnvGroupBuilder` (``group_size`` episodes, one seed) per task.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import chz
from tinker_cookbook.rl.types import EnvGroupBuilder, RLDataset, RLDatasetBuilder

from nenyax.core.errors import UsageError
from nenyax.trainers.tinker.builder import NenyaxEnvGroupBuilder, environment


class NenyaxRLDataset(RLDataset):
    """Batches of `NenyaxEnvGroupBuilder` over the tasks of `uri`'s `split` (the first split by default)."""

    def __init__(
        self,
        uri: str,
        *,
        batch_size: int,
        group_size: int,
        model_name: str,
        renderer_name: str | None = None,
        split: str | None = None,
        limit: int | None = None,
        seed: int | None = 0,
        env_options: dict[str, Any] | None = None,
    ) -> None:
        if batch_size < 1:
            msg = f"A batch holds at least one task, not batch_size={batch_size}."
            raise UsageError(msg)
        self.tasks = environment(uri).task_ids(split, limit)
        if not self.tasks:
            msg = f"{uri} has no task in split {split or '(the first)'}: nothing to train on."
            raise UsageError(msg)
        self.uri, self.batch_size, self.group_size, self.seed = uri, batch_size, group_size, seed
        self.model_name, self.renderer_name = model_name, renderer_name
        self.env_options = dict(env_options or {})

    def get_batch(self, index: int) -> Sequence[EnvGroupBuilder]:
        if not 0 <= index < len(self):
            msg = f"Batch {index} is out of range: this dataset has {len(self)} batches."
            raise IndexError(msg)
        chunk = self.tasks[index * self.batch_size : (index + 1) * self.batch_size]
        return [
            NenyaxEnvGroupBuilder(
                uri=self.uri,
                task=task,
                group_size=self.group_size,
                seed=self.seed,
                model_name=self.model_name,
                renderer_name=self.renderer_name,
                env_options=self.env_options,
            )
            for task in chunk
        ]

    def __len__(self) -> int:
        """Whole batches only (the cookbook's convention: a last partial batch is left out)."""
        return len(self.tasks) // self.batch_size


@chz.chz
class NenyaxRLDatasetBuilder(RLDatasetBuilder):
    """The training set (`split`) and an optional test set (`test_split`) of `uri`, for a cookbook config."""

    uri: str
    batch_size: int
    group_size: int
    model_name: str
    renderer_name: str | None = None
    split: str | None = None
    test_split: str | None = None
    limit: int | None = None
    seed: int | None = 0

    async def __call__(self) -> tuple[RLDataset, RLDataset | None]:
        def dataset(split: str | None, group_size: int) -> NenyaxRLDataset:
            return NenyaxRLDataset(
                self.uri,
                batch_size=self.batch_size,
                group_size=group_size,
                model_name=self.model_name,
                renderer_name=self.renderer_name,
                split=split,
                limit=self.limit,
                seed=self.seed,
            )

        test = None if self.test_split is None else dataset(self.test_split, 1)
        return dataset(self.split, self.group_size), test
