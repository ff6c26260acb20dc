"""`AgentEnvEnvironment`: an AgentEnv bundle's tasks, each episode one AgentEnv run whose agent the policy plays.

AgentEnv runs the task itself, step by step (its deploys, its prompts, its verifiers), as one of its episodes
(`EpisodeSpec`: the interface AgentEnv gives trainers, in which the caller plays the task's prompted agent).
At each of the agent's turns the adapter plays the agent as a chat loop on the episode's recording-proxy
URL: the turn's system prompt and prompt, the tools of the envs the agent acts in (AgentEnv's proxy runs
each call where the agent works), every model call recorded with AgentEnv too, and the last reply handed back.
AgentEnv's built-in agents (claude-code, codex, pi...) are containers built from the network; the policy
plays their seat instead. The built-in policies answer through the same proxy: ``reference`` with the words
the task's response checks look for (`reference`), ``null`` with an empty reply.
"""

from __future__ import annotations

import json
from typing import Any

from nenyax.adapters.agentenv.bundle import Prepared
from nenyax.adapters.agentenv.judgment import failure, result
from nenyax.adapters.agentenv.options import AgentEnvSpec
from nenyax.core import (
    Capabilities,
    Manifest,
    Mode,
    NativeEpisode,
    NativeResult,
    Split,
    TaskEnvironment,
    UnsupportedPolicyError,
)
from nenyax.core.toolkit.tasks import one_split_ids, pick


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("agentenv-framework")
    except metadata.PackageNotFoundError:
        return "unknown"


def _openai_tools(tools: list[Any]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description or "",
                "parameters": tool.inputSchema or {"type": "object", "properties": {}},
            },
        }
        for tool in tools
    ]


def _text(result: Any) -> str:
    parts = [p.get("text", "") if isinstance(p, dict) else str(getattr(p, "text", p)) for p in result.content or ()]
    text = "\n".join(str(p) for p in parts)
    return f"error: {text}" if result.isError and not text.startswith("error") else text


class AgentEnvEnvironment(TaskEnvironment):
    """The playable tasks of one AgentEnv bundle (see the module docstring)."""

    def __init__(self, spec: AgentEnvSpec, prepared: Prepared) -> None:
        self.spec = spec
        self.tasks = {task.name: task for task in prepared.tasks}
        answered = all(task.answers for task in prepared.tasks)
        extra: dict[str, Any] = {
            "bundle": str(prepared.root),
            "tasks": {task.name: {"id": task.task.id, "version": task.task.version} for task in prepared.tasks},
            "agent": "the policy plays the task's prompted agent (AgentEnv's EpisodeSpec)",
        }
        if prepared.not_playable:
            extra["not_playable"] = prepared.not_playable
        if not answered:
            extra["no_reference"] = (
                "Some tasks are graded by more than response checks, so there is no reference answer."
            )
        super().__init__(
            Manifest(
                uri=spec.uri,
                format="agentenv",
                format_version=_version(),
                mode=Mode.TASK,
                name=prepared.name,
                description=prepared.description or f"{len(self.tasks)} AgentEnv task(s) of the bundle {prepared.name}",
                splits=(Split(name="tasks", count=len(self.tasks)),),
                observation="each prompt the task sends its agent, and the tools of the envs the agent acts in",
                action="tool calls, then a reply to each prompt",
                extra=extra,
                capabilities=Capabilities(
                    stable_task_ids=True,
                    reference_policy=answered,
                    null_policy=True,
                    random_policy=True,
                    multi_turn=True,
                    concurrent_sessions=True,
                    max_turns=spec.max_turns,
                ),
            )
        )

    def task_ids(self, split: str | None = None, limit: int | None = None) -> list[str]:
        """The bundle's task names (tasks/<name>.json), in AgentEnv's order."""
        return one_split_ids(self.uri, self.tasks, split, limit)

    def reference_reply(self, task_id: str | None, messages: list[dict[str, Any]]) -> str | dict[str, Any]:
        """The words the task's response checks look for, as the reply to the prompt being answered."""
        task = self.tasks[pick(self.uri, task_id, self.tasks)]
        if not task.answers:
            msg = f"The AgentEnv task {task.name} is graded by more than response checks, so it has no reference."
            raise UnsupportedPolicyError(msg)
        asked = next((m.get("content") for m in reversed(messages) if m.get("role") == "user"), None)
        if asked not in task.answers:
            raise UnsupportedPolicyError(f"The AgentEnv task {task.name} has no reference reply to {asked!r}.")
        return task.answers[asked]

    async def run(self, episode: NativeEpisode) -> NativeResult:
        """One AgentEnv run of the task, its agent played through the proxy, judged by its verifiers."""
        from agent_env.store.routing import namespace_routing
        from agent_env.task import EpisodeSpec
        from openai import AsyncOpenAI

        task = self.tasks[pick(self.uri, episode.task_id, self.tasks)]
        said: list[dict[str, Any]] = []
        client = AsyncOpenAI(base_url=episode.base_url, api_key=episode.api_key, max_retries=0)
        with namespace_routing():
            run = await EpisodeSpec.from_task(task.task, turn_timeout=self.spec.turn_timeout).start()
            try:
                while (turn := await run.next_turn()) is not None:
                    await self._play(turn, client, episode.model, said)
                scores = await run.result()
            except Exception as exc:  # noqa: BLE001 - the run's failure, classified by the step that failed
                metadata = run._context.metadata  # AgentEnv keeps the run's record there (no public accessor)
                status, error = failure(metadata, exc)
                return NativeResult(judgment=None, status=status, error=error, messages=tuple(said), info={})
            finally:
                if not run.finished:
                    await run.abandon("the Nenyax episode ended")
                await client.close()
        return result(scores, run._context.metadata, tuple(said))

    async def _play(self, turn: Any, client: Any, model: str, said: list[dict[str, Any]]) -> None:
        """The agent's turn: a chat loop on the proxy with the turn's tools, its last reply handed back."""
        messages: list[dict[str, Any]] = []
        if turn.system_prompt:
            messages.append({"role": "system", "content": turn.system_prompt})
        messages.append({"role": "user", "content": turn.prompt})
        said.extend(messages)
        reply = ""
        async with turn.tools() as tools:
            offered = _openai_tools(tools.list())
            for _ in range(self.spec.max_turns):
                options: dict[str, Any] = {"tools": offered} if offered else {}
                response = await client.chat.completions.create(model=model, messages=messages, **options)
                message = response.choices[0].message.model_dump(exclude_none=True)
                message.setdefault("content", "")
                await turn.record_model_call(message, model=model)
                messages.append(message)
                said.append(message)
                reply = message.get("content") or ""
                calls = message.get("tool_calls") or []
                if not calls:
                    break
                for call in calls:
                    try:
                        arguments = json.loads(call["function"].get("arguments") or "{}")
                        text = _text(await tools.call(call["function"]["name"], arguments))
                    except (ValueError, KeyError) as exc:  # arguments that are not JSON, a tool not offered
                        text = f"error: {exc}"
                    answer = {"role": "tool", "tool_call_id": call.get("id", ""), "content": text}
                    messages.append(answer)
                    said.append(answer)
        await turn.end(reply)
