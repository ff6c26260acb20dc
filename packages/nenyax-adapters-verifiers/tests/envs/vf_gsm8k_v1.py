"""A gsm8k-style verifiers v1 taskset built in memory (the notes' offline taskset, per verifiers 0.4).

Importable as the taskset id ``vf_gsm8k_v1`` (``verifiers:vf-gsm8k-v1``): a module exporting exactly one
`Taskset` subclass in ``__all__``, as verifiers' own loader requires.
"""

import verifiers.v1 as vf

ROWS = [
    (
        "Natalia sold clips to 48 of her friends in April, and then half as many in May. How many clips did she sell altogether?",
        "72",
    ),
    ("Weng earns $12 an hour for babysitting. Yesterday she babysat 50 minutes. How much did she earn?", "10"),
    ("James writes a 3-page letter to 2 different friends twice a week. How many pages does he write a year?", "624"),
]


class Gsm8kData(vf.TaskData):
    answer: str


class Gsm8kTask(vf.Task[Gsm8kData]):
    @vf.reward(weight=1.0)
    async def correct(self, trace: vf.Trace) -> float:
        return 1.0 if vf.extract_boxed_answer(trace.last_reply) == self.data.answer else 0.0

    @vf.metric
    async def reply_chars(self, trace: vf.Trace) -> float:
        return float(len(trace.last_reply))


class Gsm8kConfig(vf.TasksetConfig):
    num_tasks: int = len(ROWS)


class Gsm8kTaskset(vf.Taskset[Gsm8kTask, Gsm8kConfig]):
    def load(self):
        return [
            Gsm8kTask(
                Gsm8kData(prompt=q + " Put the answer in \\boxed{}.", answer=a, id=f"gsm8k-{i}"), self.config.task
            )
            for i, (q, a) in enumerate(ROWS[: self.config.num_tasks])
        ]


__all__ = ["Gsm8kTaskset"]
