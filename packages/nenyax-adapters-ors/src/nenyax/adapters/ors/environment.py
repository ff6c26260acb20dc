"""An ORS environment as a step environment: task ids ``<split>/<index>``, one server session per episode."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

import attrs

from nenyax.adapters.ors.reference import Answers, find_answers, string_argument
from nenyax.adapters.ors.wire import Connections
from nenyax.core import BadURIError, Capabilities, Manifest, Mode, Split, StepEnvironment
from nenyax.core.toolkit.loops import run_sync
from nenyax.core.toolkit.suggest import did_you_mean

if TYPE_CHECKING:
    from nenyax.adapters.ors.discovery import ServerInfo
    from nenyax.adapters.ors.options import OrsSpec
    from nenyax.adapters.ors.session import OrsSession


def tasks_digest(tasks: tuple[Any, ...] | None, count: int) -> str:
    """A sha256 of a split's task specs (of its count alone when the server does not list them)."""
    content = {"count": count} if tasks is None else {"tasks": tasks}
    return "sha256:" + hashlib.sha256(json.dumps(content, sort_keys=True, default=str).encode()).hexdigest()


class OrsEnvironment(StepEnvironment):
    """One environment on one ORS server."""

    def __init__(self, uri: str, spec: OrsSpec, info: ServerInfo) -> None:
        """Record what the server said it serves; pick the splits the URI asks for."""
        self.spec = spec
        self.info = info
        names = [name for name, _type in info.splits]
        if spec.split is not None and spec.split not in names:
            msg = f"{info.env} has no split {spec.split!r}." + did_you_mean(spec.split, names, "split")
            raise BadURIError(msg)
        if not names:
            msg = f"{info.env} at {spec.base_url} lists no splits, so it has no tasks to play."
            raise BadURIError(msg)
        self.default_split = spec.split or names[0]
        self.connections = Connections()
        served = [spec.split] if spec.split else names
        listed = [info.tasks[s] for s in served]
        every = None if any(t is None for t in listed) else [t for ts in listed if ts is not None for t in ts]
        self.answers: Answers = find_answers(spec, info, every)
        # Where a chat reply without a tool call goes, as (tool, argument): the server's terminal tool,
        # else the URI's ?terminal_tool=, else nowhere (such a reply is then the policy's failure).
        self.plain_reply = self._plain_reply()
        super().__init__(self._manifest(uri, served))

    @property
    def base_url(self) -> str:
        """The server's base URL."""
        return self.spec.base_url

    def _manifest(self, uri: str, served: list[str]) -> Manifest:
        info, answers = self.info, self.answers
        tool_names = tuple(str(t["name"]) for t in info.tools)
        reference = (
            f"calls {answers.tool.name}({answers.tool.arg}=<task.{answers.key}>)"
            if answers.reference and answers.tool
            else answers.why_not
        )
        return Manifest(
            uri=uri,
            format="ors",
            format_version=info.version or "unversioned",
            mode=Mode.STEP,
            name=info.env,
            description=(
                f"The ORS environment {info.env!r} served at {self.spec.base_url}: "
                f"{len(tool_names)} tool(s), splits {', '.join(served)}."
            ),
            splits=tuple(Split(name=s, count=info.counts[s]) for s in served),
            observation=(
                "A JSON object: first {'prompt': [blocks]}, then after each call {'tool': name, 'blocks': [...], "
                "'metadata': {...}}; blocks are ORS text or image blocks."
            ),
            action=(
                "A tool call {'name': tool, 'input': {...}}; chat models write "
                '<tool_call>{"name": ..., "arguments": {...}}</tool_call>.'
            ),
            tools=tool_names,
            extra={
                "base_url": self.spec.base_url,
                "environments": list(info.environments),
                "tool_specs": [dict(t) for t in info.tools],
                "terminal_tool": info.terminal_tool,
                "split_types": {name: kind for name, kind in info.splits},
                "tasks_digest": {s: tasks_digest(info.tasks[s], info.counts[s]) for s in served},
                "score": "The sum of the rewards the tool calls returned (a null reward counts 0).",
                "reference": reference,
                "answer_tool": None if answers.tool is None else attrs.asdict(answers.tool),
                "answer_key": answers.key,
                "plain_reply_tool": self.plain_reply[0] if self.plain_reply else None,
            },
            capabilities=Capabilities(
                seeded=False,
                stable_task_ids=True,
                reference_policy=answers.reference,
                null_policy=answers.tool is not None,
                random_policy=answers.tool is not None,
                multi_turn=True,
                tools=True,
                max_turns=self.spec.max_turns,
            ),
        )

    def _plain_reply(self) -> tuple[str, str | None] | None:
        terminal, wanted = self.info.terminal_tool, self.spec.terminal_tool
        if terminal is not None and wanted in (None, terminal["name"]):
            return str(terminal["name"]), terminal.get("arg")
        if wanted is None:
            return None
        by_name = {t.get("name"): t for t in self.info.tools}
        if wanted not in by_name:
            msg = f"{self.info.env} has no tool {wanted!r} to send plain replies to." + did_you_mean(
                wanted, [str(n) for n in by_name], "tool"
            )
            raise BadURIError(msg)
        arg = string_argument(by_name[wanted])
        if arg is None:
            msg = f"The tool {wanted!r} of {self.info.env} takes no single string argument, so it cannot take a reply."
            raise BadURIError(msg)
        return wanted, arg

    # ---- tasks

    def task_ids(self, split: str | None = None, limit: int | None = None) -> list[str]:
        """``<split>/0`` ... in the server's order (the URI's split, else the server's first, by default)."""
        split = split or self.default_split
        if split not in self.info.counts:
            msg = f"{self.info.env} has no split {split!r}." + did_you_mean(split, self.info.counts, "split")
            raise BadURIError(msg)
        count = self.info.counts[split] if limit is None else min(limit, self.info.counts[split])
        return [f"{split}/{index}" for index in range(count)]

    def parse_task(self, task: str) -> tuple[str, int]:
        """The split and index of `task`; `BadURIError` for one the server did not list."""
        split, _, digits = str(task).rpartition("/")
        if split in self.info.counts and digits.isascii() and digits.isdecimal():
            index = int(digits)
            if index < self.info.counts[split]:
                return split, index
        example = f"{self.default_split}/0"
        msg = f"{task!r} is not a task of {self.info.env}; its task ids look like {example!r}."
        raise BadURIError(msg)

    def task_spec(self, split: str, index: int) -> Any:
        """The task's spec as the server listed it, or None when it only counts its tasks."""
        tasks = self.info.tasks.get(split)
        return None if tasks is None else tasks[index]

    async def asession(self, task: str | None = None, seed: int | None = None) -> OrsSession:
        """Open a server session on `task` (default: the first task of the default split)."""
        from nenyax.adapters.ors.session import OrsSession

        split, index = self.parse_task(task if task is not None else f"{self.default_split}/0")
        return await OrsSession.open(self, split, index, lease=True)

    def session(self, task: str | None = None, seed: int | None = None) -> OrsSession:
        """Synchronous `asession` (each later call of the session opens its own connection)."""
        from nenyax.adapters.ors.session import OrsSession

        split, index = self.parse_task(task if task is not None else f"{self.default_split}/0")
        return run_sync(OrsSession.open(self, split, index, lease=False))
