"""The tests' own ORS environments, served by the real ors-sdk server: ``python ors_envs.py PORT``.

``MathEnv`` is three arithmetic questions whose tasks carry their honest answer, with a ``submit``
tool (reward 1 when right, ends the episode), a ``hint`` tool (no reward, does not end it) and a
``slow`` tool that sleeps before answering (so a test can cut its stream). ``DiceEnv`` has two tools
taking a string, so the adapter cannot tell which one answers. ``BrokenEnv`` has a tool that raises.
"""

from __future__ import annotations

import asyncio
import sys

from ors import Environment, Server, Split, TextBlock, ToolOutput, tool
from pydantic import BaseModel

QUESTIONS = [("What is 2+2?", "4"), ("What is 3*5?", "15"), ("What is 10-7?", "3")]


class SubmitInput(BaseModel):
    answer: str


class SlowInput(BaseModel):
    seconds: float


class MathEnv(Environment):
    """Arithmetic questions; the task's ``answer`` is the reference."""

    @classmethod
    def list_splits(cls):
        return [Split(name="test", type="test"), Split(name="train", type="train")]

    @classmethod
    def list_tasks(cls, split):
        rows = QUESTIONS if split == "test" else QUESTIONS[:1]
        return [{"question": q, "answer": a} for q, a in rows]

    def __init__(self, task_spec=None, secrets=None):
        super().__init__(task_spec or {}, secrets or {})
        self.tries = 0
        self.slow_runs = 0

    def get_prompt(self):
        return [TextBlock(text=self.task_spec["question"])]

    @tool
    def hint(self) -> ToolOutput:
        """Get a hint (no reward, does not finish)."""
        return ToolOutput(blocks=[TextBlock(text="Compute it step by step.")], metadata={"hint": True})

    @tool
    async def slow(self, params: SlowInput) -> ToolOutput:
        """Wait the given seconds, then answer (no reward)."""
        self.slow_runs += 1
        await asyncio.sleep(params.seconds)
        return ToolOutput(blocks=[TextBlock(text=f"waited {params.seconds}")], metadata={"runs": self.slow_runs})

    @tool
    def submit(self, params: SubmitInput) -> ToolOutput:
        """Submit the final answer."""
        self.tries += 1
        correct = params.answer.strip() == self.task_spec["answer"]
        return ToolOutput(
            blocks=[TextBlock(text="Correct!" if correct else "Incorrect.")],
            metadata={"tries": self.tries},
            reward=1.0 if correct else 0.0,
            finished=True,
        )


class NameInput(BaseModel):
    name: str


class DiceEnv(Environment):
    """Two string tools and no gold answer: no built-in policy can be played."""

    @classmethod
    def list_splits(cls):
        return ["validation"]

    @classmethod
    def list_tasks(cls, split):
        return [{"sides": 6}]

    def get_prompt(self):
        return [TextBlock(text="Roll or rename.")]

    @tool
    def roll(self, params: NameInput) -> ToolOutput:
        """Roll a die."""
        return ToolOutput(blocks=[TextBlock(text="3")], reward=0.5, finished=True)

    @tool
    def rename(self, params: NameInput) -> ToolOutput:
        """Rename the die."""
        return ToolOutput(blocks=[TextBlock(text="ok")])


class BrokenEnv(Environment):
    """A tool whose code raises: the server streams an ``error`` event."""

    @classmethod
    def list_splits(cls):
        return ["test"]

    @classmethod
    def list_tasks(cls, split):
        return [{"answer": "x"}]

    def get_prompt(self):
        return [TextBlock(text="Submit anything.")]

    @tool
    def submit(self, params: SubmitInput) -> ToolOutput:
        """Crash."""
        raise RuntimeError("the grader crashed")


if __name__ == "__main__":
    Server([MathEnv, DiceEnv, BrokenEnv]).run(host="127.0.0.1", port=int(sys.argv[1]))
