"""A HUD taskset as a rollout environment: hud's `LocalRuntime` serves the task, hud's chat agent plays it.

Each episode runs the task row through hud's own ``Task.run`` with `LocalRuntime` (the template's
environment served in this process on a loopback port) and hud's `OpenAIChatAgent` pointed at the
episode's recording-proxy URL; the template's grade is the judgment. hud serializes episodes of one
`Environment` instance (its `LocalRuntime` holds a lock per instance), so concurrent episodes of one
environment run one after another.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from nenyax.adapters.hud.judgment import result
from nenyax.adapters.hud.options import HudSpec
from nenyax.adapters.hud.resolve import Resolved
from nenyax.core import (
    Capabilities,
    Manifest,
    Mode,
    NativeEpisode,
    NativeResult,
    RolloutEnvironment,
    Split,
    UnsupportedPolicyError,
)
from nenyax.core.toolkit.tasks import one_split_ids, pick


def _answer(task: Any, column: str) -> str | None:
    value = (task.columns or {}).get(column)
    return None if value is None or not str(value).strip() else str(value)


class HudEnvironment(RolloutEnvironment):
    """HUD task rows, each episode one hud rollout graded by the row's template."""

    def __init__(self, spec: HudSpec, version: str, resolved: Resolved) -> None:
        self.spec = spec
        self.tasks = resolved.tasks
        self.envs = resolved.envs
        rows = [task.model_dump(mode="json", exclude_none=True) for task in self.tasks.values()]
        has_reference = all(_answer(task, spec.answer) is not None for task in self.tasks.values())
        templates = sorted({f"{task.env}/{task.id}" for task in self.tasks.values()})
        descriptions = sorted(
            {getattr(env.tasks.get(task.id), "description", "") for task, env in self._pairs()} - {""}
        )
        no_reference = f"Some tasks have no {spec.answer!r} column, so there is no reference answer."
        super().__init__(
            Manifest(
                uri=spec.uri,
                format="hud",
                format_version=version,
                mode=Mode.ROLLOUT,
                name=resolved.name,
                description=descriptions[0] if len(descriptions) == 1 else f"{len(templates)} hud task templates",
                splits=(Split(name="tasks", count=len(self.tasks)),),
                observation="the template's prompt, as a user message (hud's OpenAIChatAgent)",
                action="an assistant message: its text is the answer the template grades",
                extra={
                    "runtime": "LocalRuntime",
                    "agent": "OpenAIChatAgent",
                    "environments": sorted({env.name for env in self.envs.values()}),
                    "templates": templates,
                    "tasks_sha256": hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest(),
                    "answer_column": spec.answer,
                    **({"max_steps": spec.max_steps} if spec.max_steps is not None else {}),
                    **({} if has_reference else {"no_reference": no_reference}),
                },
                capabilities=Capabilities(
                    stable_task_ids=True,
                    reference_policy=has_reference,
                    multi_turn=False,
                    max_turns=spec.max_steps,
                ),
            )
        )

    def _pairs(self) -> list[tuple[Any, Any]]:
        return [(task, self.envs[slug]) for slug, task in self.tasks.items()]

    def task_ids(self, split: str | None = None, limit: int | None = None) -> list[str]:
        """The task rows' slugs, in the taskset's order."""
        return one_split_ids(self.uri, self.tasks, split, limit)

    def _slug(self, task_id: str | None) -> str:
        return pick(self.uri, task_id, self.tasks)

    async def run(self, episode: NativeEpisode) -> NativeResult:
        """One hud rollout of the task: `LocalRuntime` serves it, `OpenAIChatAgent` answers via the proxy."""
        from openai import AsyncOpenAI

        from hud import LocalRuntime
        from hud.agents import OpenAIChatAgent
        from hud.agents.types import OpenAIChatConfig
        from nenyax.adapters.hud.library import quiet

        quiet()  # again: a user's code may have imported hud with a key since the load
        slug = self._slug(episode.task_id)
        # Retries off: a failing call is classified by the proxy at once, not asked again twice.
        client = AsyncOpenAI(base_url=episode.base_url, api_key=episode.api_key, max_retries=0)
        options: dict[str, Any] = {"max_steps": self.spec.max_steps} if self.spec.max_steps is not None else {}
        config = OpenAIChatConfig(
            model=episode.model, base_url=episode.base_url, api_key=episode.api_key, model_client=client, **options
        )
        try:
            job = await self.tasks[slug].run(OpenAIChatAgent(config), runtime=LocalRuntime(self.envs[slug]))
        finally:
            await client.close()
        return result(job.runs[0])

    def reference_reply(self, task_id: str | None, messages: list[dict[str, Any]]) -> str | dict[str, Any]:
        """The task's reference answer (its ``answer`` column), sent as the agent's reply."""
        slug = self._slug(task_id)
        gold = _answer(self.tasks[slug], self.spec.answer)
        if gold is None:
            msg = f"Task {slug} of {self.uri} has no {self.spec.answer!r} column, so no reference policy."
            raise UnsupportedPolicyError(msg)
        return gold
