"""v1 tasksets that misbehave on purpose or lack answers, named as ``verifiers:vf_odd_v1:<attr>``."""

import verifiers.v1 as vf


class PlainData(vf.TaskData):
    pass


class BriefTask(vf.Task[PlainData]):
    @vf.reward(weight=1.0)
    async def brief(self, trace: vf.Trace) -> float:
        return 1.0 if 0 < len(trace.last_reply) < 20 else 0.0


class NoAnswerTaskset(vf.Taskset[BriefTask, vf.TasksetConfig]):
    """Tasks without an answer field: graded on length only, so there is no reference."""

    def load(self):
        return [
            BriefTask(PlainData(prompt=p, id=f"brief-{i}"), self.config.task)
            for i, p in enumerate(["Greet me.", "Say bye."])
        ]


class RaisingTask(vf.Task[PlainData]):
    async def setup(self, trace, runtime):
        raise RuntimeError("the task broke on purpose")

    @vf.reward(weight=1.0)
    async def anything(self, trace: vf.Trace) -> float:
        return 1.0


class RaisingTaskset(vf.Taskset[RaisingTask, vf.TasksetConfig]):
    """A task whose setup raises inside verifiers' episode loop."""

    def load(self):
        return [RaisingTask(PlainData(prompt="Say hi.", id="boom"), self.config.task)]


class SilentTask(vf.Task[PlainData]):
    """No ``@vf.reward`` at all: verifiers sums nothing to 0.0, which is no verdict."""


class NoRewardTaskset(vf.Taskset[SilentTask, vf.TasksetConfig]):
    """Tasks nothing judges: no reward on the task, and the plain single-agent env records none."""

    def load(self):
        return [
            SilentTask(PlainData(prompt=p, id=f"silent-{i}"), self.config.task) for i, p in enumerate(["Hi.", "Bye."])
        ]


class BoxedTaskset(vf.Taskset[BriefTask, vf.TasksetConfig]):
    """Tasks that run in a container image, which the subprocess runtime cannot give."""

    def load(self):
        return [BriefTask(PlainData(prompt="Greet me.", id="boxed-0", image="python:3.11-slim"), self.config.task)]
