"""Known-good transcripts, replayed by karotte's fake model (`use_fake_model`): one per task."""

import json

from karotte import EvaluationRunConfig
from karotte.schemas import ChatCompletionMessageToolCall, Function, Message

from environment.paths import STUDENT_DATA_DIR


def _bash(call_id: str, command: str) -> ChatCompletionMessageToolCall:
    arguments = json.dumps({"command": command})
    return ChatCompletionMessageToolCall(
        id=call_id, type="function", function=Function(name="bash", arguments=arguments)
    )


def get_messages(config: EvaluationRunConfig) -> list[Message]:
    """The assistant's turns for `config.task_id`; a step ends on a turn without a tool call."""
    if config.task_id == "write-greeting":
        write = f"echo 'hello, desk' > {STUDENT_DATA_DIR / 'greeting.txt'}"
        return [
            Message(role="assistant", content="Writing it.", tool_calls=[_bash("call_1", write)]),
            Message(role="assistant", content="done"),
        ]
    if config.task_id == "count-words":
        count = f"wc -w < {STUDENT_DATA_DIR / 'notes.txt'}"
        return [
            Message(role="assistant", content="Counting.", tool_calls=[_bash("call_1", count)]),
            Message(role="assistant", content="words: 8"),
        ]
    raise ValueError(f"No known-good transcript for {config.task_id!r}.")
