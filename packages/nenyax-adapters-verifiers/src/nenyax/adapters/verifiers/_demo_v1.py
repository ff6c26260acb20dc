"""The demo as a verifiers v1 `Taskset` (verifiers 0.4): imported only when that API is installed.

The classes are made by `build_taskset`, not at import: every module of the distribution must import
without verifiers (the wheels check imports them all), and verifiers' generics need it at class time.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any


@functools.cache
def build_taskset(rows: tuple[tuple[str, str], ...], system_prompt: str) -> Any:
    """A `Taskset` class over `rows` (question, answer) with ids ``q0``, ``q1``..., rewarding the boxed gold answer.

    Cached: the same rows give the same class, so verifiers' loader finds one taskset under one id.
    """
    import verifiers.v1 as vf

    class DemoData(vf.TaskData):
        """A question's data: the prompt, and the gold answer the reward compares with."""

        answer: str

    class DemoTask(vf.Task[DemoData]):
        """One arithmetic question."""

        @vf.reward(weight=1.0)
        async def correct_answer(self, trace: Any) -> float:
            """1 when the last reply's boxed answer is the gold one."""
            return 1.0 if (vf.extract_boxed_answer(trace.last_reply) or "").strip() == self.data.answer else 0.0

    class DemoTaskset(vf.Taskset[DemoTask, vf.TasksetConfig]):
        """The demo questions as v1 tasks."""

        def load(self) -> Iterable[Any]:
            """One task per question."""
            return [
                DemoTask(DemoData(prompt=q, answer=a, id=f"q{i}", system_prompt=system_prompt), self.config.task)
                for i, (q, a) in enumerate(rows)
            ]

    return DemoTaskset
