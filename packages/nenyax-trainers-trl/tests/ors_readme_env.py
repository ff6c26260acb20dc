"""The ors-sdk README's own server example (ors-sdk 0.1.0, "Quick Start"), verbatim but for the port, which the
tests pass as the first argument: ``python ors_readme_env.py PORT``."""

import sys

from ors import Environment, Server, Split, TextBlock, ToolOutput, tool
from pydantic import BaseModel


class SubmitInput(BaseModel):
    answer: str


class MathEnv(Environment):
    @classmethod
    def list_splits(cls):
        return [Split(name="test", type="test")]

    @classmethod
    def list_tasks(cls, split: str):
        return [{"question": "What is 2+2?", "answer": "4"}]

    def get_prompt(self):
        return [TextBlock(text=self.task_spec["question"])]

    @tool
    def submit(self, params: SubmitInput) -> ToolOutput:
        correct = params.answer.strip() == self.task_spec["answer"]
        return ToolOutput(
            blocks=[TextBlock(text="Correct!" if correct else "Incorrect")],
            reward=1.0 if correct else 0.0,
            finished=True,
        )


if __name__ == "__main__":
    Server([MathEnv]).run(port=int(sys.argv[1]))
