"""Small rollout- and task-mode environments whose native loops use the official `openai` client (the
client most native loops use) against the recording proxy: core's own tests of the two modes.

They are doubles of real formats (verifiers, harbor come as their own adapters); the task harness runs
its agents in `LocalProcessSandbox`, which isolates nothing. `openai` is imported when an episode runs
(``pip install openai``), so importing this module needs nothing beyond core.
"""

from __future__ import annotations

import json
import random
import re
import string
from pathlib import Path
from typing import Any

from nenyax.core import (
    BadURIError,
    Capabilities,
    Judgment,
    Manifest,
    Mode,
    NativeEpisode,
    NativeResult,
    RolloutEnvironment,
    SandboxSpec,
    Split,
    TaskEnvironment,
    hookimpl,
)
from nenyax.core.hookspecs import PluginSpec
from nenyax_testsupport.sandbox_fake import LocalProcessSandbox

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "multiply",
            "description": "Multiply two integers.",
            "parameters": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"],
            },
        },
    }
]


def operands(task: str) -> tuple[int, int]:
    rng = random.Random(task)
    return rng.randint(2, 99), rng.randint(2, 99)


def solving_reply(messages: list[dict[str, Any]]) -> str:
    """A `ScriptedModelServer` reply that solves both doubles' tasks (the right product, the right shell
    command), so that in a test of faults an episode left unscored stands out; "0" to anything else."""
    prompt = str(messages[-1]["content"])
    if match := re.search(r"What is (\d+) times (\d+)\?", prompt):
        return str(int(match[1]) * int(match[2]))
    if match := re.search(r"Write the word (\w+) into answer.txt", prompt):
        return f"echo {match[1]} > answer.txt"
    return "0"


class ToolMathEnvironment(RolloutEnvironment):
    """``toolmath:mul``: a multiplication asked through chat, with a `multiply` tool the loop executes."""

    def __init__(self, uri: str, size: int = 6, concurrent: bool = True, same: bool = False) -> None:
        self.size = size
        self.same = same
        """Every task asks the same multiplication (an environment whose gold answer is one constant)."""
        self.active = 0
        self.most_active = 0
        super().__init__(
            Manifest(
                uri=uri,
                format="toolmath",
                format_version="1",
                mode=Mode.ROLLOUT,
                name="mul",
                splits=(Split(name="all", count=size),),
                tools=("multiply",),
                capabilities=Capabilities(
                    seeded=True,
                    stable_task_ids=True,
                    reference_policy=True,
                    multi_turn=True,
                    tools=True,
                    max_turns=4,
                    concurrent_sessions=concurrent,
                ),
            )
        )

    def task_ids(self, split: str | None = None, limit: int | None = None) -> list[str]:
        count = self.size if limit is None else min(limit, self.size)
        return [f"mul/{i}" for i in range(count)]

    async def run(self, episode: NativeEpisode) -> NativeResult:
        if episode.task_id not in self.task_ids():
            raise BadURIError(f"{episode.task_id!r} is not a task of {self.uri}.")
        self.active += 1
        self.most_active = max(self.most_active, self.active)
        a, b = self.operands(episode.task_id)
        import openai

        client: Any = openai.AsyncOpenAI(base_url=episode.base_url, api_key=episode.api_key, max_retries=0)
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": "Use the multiply tool, then reply with the number only."},
            {"role": "user", "content": f"What is {a} times {b}?"},
        ]
        answer = ""
        try:
            for _ in range(4):
                reply = await client.chat.completions.create(
                    model=episode.model, messages=messages, tools=TOOLS, logprobs=True
                )
                message = reply.choices[0].message
                if message.tool_calls:
                    messages.append(message.model_dump(exclude_none=True))
                    for call in message.tool_calls:
                        args = json.loads(call.function.arguments)
                        messages.append(
                            {"role": "tool", "tool_call_id": call.id, "content": str(args["a"] * args["b"])}
                        )
                    continue
                answer = (message.content or "").strip()
                messages.append({"role": "assistant", "content": answer})
                break
        finally:
            await client.close()
            self.active -= 1
        score = 1.0 if answer == str(a * b) else 0.0
        verdict = Judgment(score=score, passed=score == 1.0, feedback=f"answered {answer!r}", judge="toolmath:exact")
        return NativeResult(judgment=verdict, messages=tuple(messages))

    def operands(self, task: str) -> tuple[int, int]:
        return operands("mul/0" if self.same else task)

    def reference_reply(self, task_id: str | None, messages: list[dict[str, Any]]) -> str | dict[str, Any]:
        a, b = self.operands(task_id or "")
        if not any(m.get("role") == "tool" for m in messages):
            call = {"name": "multiply", "arguments": json.dumps({"a": a, "b": b})}
            return {"content": None, "tool_calls": [{"id": "call_0", "type": "function", "function": call}]}
        return str(a * b)


class ShellTaskEnvironment(TaskEnvironment):
    """``shelltask:hello``: write a word into answer.txt; graded by tests/test.sh; solved by solution/solve.sh.

    The harness here is a double (written for these tests): it runs the built-in agents itself and a
    model agent that asks the model for one shell command, all through `LocalProcessSandbox`.
    """

    WORDS = ("hello", "world", "nenyax", "sandbox")

    def __init__(self, uri: str, root: Path) -> None:
        self.sandbox = LocalProcessSandbox()
        self.root = root
        for word in self.WORDS:
            task = root / word
            (task / "tests").mkdir(parents=True, exist_ok=True)
            (task / "solution").mkdir(exist_ok=True)
            (task / "instruction.md").write_text(f"Write the word {word} into answer.txt.\n")
            (task / "tests" / "test.sh").write_text(
                f'if [ "$(cat answer.txt 2>/dev/null)" = "{word}" ]; then echo 1 > reward.txt; '
                "else echo 0 > reward.txt; fi\n"
            )
            (task / "solution" / "solve.sh").write_text(f"echo {word} > answer.txt\n")
        super().__init__(
            Manifest(
                uri=uri,
                format="shelltask",
                format_version="1",
                mode=Mode.TASK,
                name="hello",
                splits=(Split(name="all", count=len(self.WORDS)),),
                capabilities=Capabilities(seeded=True, stable_task_ids=True, reference_policy=True, max_turns=1),
            )
        )

    def task_ids(self, split: str | None = None, limit: int | None = None) -> list[str]:
        return list(self.WORDS[:limit] if limit is not None else self.WORDS)

    async def run(self, episode: NativeEpisode) -> NativeResult:
        folder = self.root / str(episode.task_id)
        image = await self.sandbox.build(SandboxSpec(context=folder))
        async with await self.sandbox.start(image) as box:
            if episode.agent == "reference":
                await box.exec(["sh", "solution/solve.sh"], timeout=10)
            elif episode.agent == "random":
                junk = "".join(random.Random(episode.sample).choice(string.ascii_lowercase) for _ in range(7))
                await box.exec(f"echo {junk} > answer.txt", timeout=10)
            elif episode.agent == "model":
                import openai

                client: Any = openai.AsyncOpenAI(base_url=episode.base_url, api_key=episode.api_key, max_retries=0)
                try:
                    reply = await client.chat.completions.create(
                        model=episode.model,
                        messages=[
                            {"role": "system", "content": "Reply with one shell command and nothing else."},
                            {"role": "user", "content": (folder / "instruction.md").read_text()},
                        ],
                    )
                finally:
                    await client.close()
                await box.exec(reply.choices[0].message.content or "true", timeout=10)
            graded = await box.exec(["sh", "tests/test.sh"], timeout=10)
            reward = float((await box.exec(["cat", "reward.txt"], timeout=10)).stdout)
        verdict = Judgment(score=reward, passed=reward == 1.0, judge="shelltask:test.sh")
        return NativeResult(judgment=verdict, info={"image": image.digest, "test_exit": graded.exit_code})


class NativeAdapters:
    """A plugin object declaring both formats (as an entry-point module would)."""

    @hookimpl
    def nenyax_register_adapters(self) -> list[PluginSpec]:
        return [
            PluginSpec(kind="adapter", name="toolmath", factory="nenyax_testsupport.native_fakes:ToolMathAdapter"),
            PluginSpec(kind="adapter", name="shelltask", factory="nenyax_testsupport.native_fakes:ShellTaskAdapter"),
        ]


class ToolMathAdapter:
    """``toolmath:mul?size=N`` (``&same=true``: every task asks the same multiplication; ``&concurrent=false``:
    it does not allow concurrent sessions)."""

    def load(self, uri: Any, context: Any = None) -> ToolMathEnvironment:
        same = bool(uri.params.get("same", False))
        concurrent = bool(uri.params.get("concurrent", True))
        return ToolMathEnvironment(uri.raw, size=int(uri.params.get("size", 6)), concurrent=concurrent, same=same)

    def examples(self) -> list[str]:
        return ["toolmath:mul"]


class ShellTaskAdapter:
    """``shelltask:hello?root=<folder>``: the task folders are written under `root`."""

    def load(self, uri: Any, context: Any = None) -> ShellTaskEnvironment:
        root = uri.params.get("root")
        if not root:
            raise BadURIError("Name a folder for the task files: 'shelltask:hello?root=/tmp/tasks'.")
        return ShellTaskEnvironment(uri.raw, Path(str(root)))

    def examples(self) -> list[str]:
        return ["shelltask:hello?root=/tmp/nenyax-shelltask"]
