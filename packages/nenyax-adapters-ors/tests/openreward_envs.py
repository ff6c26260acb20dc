"""The tests' own environment on openreward's ORS server: ``python openreward_envs.py PORT``.

``CapitalEnv`` answers through a ``@terminal`` tool (hidden from the tool list: a plain reply is the
answer) and has a ``lookup`` tool; the task carries its honest answer.
"""

from __future__ import annotations

import sys

from openreward.environments import Environment, Server, Split, TextBlock, ToolOutput, terminal, tool
from pydantic import BaseModel

CAPITALS = [("France", "Paris"), ("Japan", "Tokyo"), ("Peru", "Lima")]


class Answer(BaseModel):
    answer: str


class CapitalEnv(Environment):
    @classmethod
    def list_splits(cls):
        return [Split(name="test", type="test")]

    @classmethod
    def list_tasks(cls, split):
        return [{"country": c, "answer": a} for c, a in CAPITALS]

    def get_prompt(self):
        return [TextBlock(text=f"What is the capital of {self.task_spec['country']}?")]

    @tool
    def lookup(self) -> ToolOutput:
        """Look up the continent of the country (no reward)."""
        return ToolOutput(blocks=[TextBlock(text="It is a country on Earth.")])

    @terminal
    @tool
    def answer(self, params: Answer) -> ToolOutput:
        """Give the final answer."""
        correct = params.answer.strip().lower() == self.task_spec["answer"].lower()
        return ToolOutput(
            blocks=[TextBlock(text="right" if correct else "wrong")], reward=1.0 if correct else 0.0, finished=True
        )


if __name__ == "__main__":
    Server([CapitalEnv]).run(host="127.0.0.1", port=int(sys.argv[1]))
