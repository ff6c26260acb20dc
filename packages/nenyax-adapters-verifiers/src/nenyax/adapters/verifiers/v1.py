"""verifiers v1 tasksets (0.3.x and 0.4.x): a `Taskset` of `Task`s graded by ``@vf.reward`` methods.

Each episode builds a `SingleAgentEnv` of the taskset with the ``null`` harness (a plain chat loop) in
the ``subprocess`` runtime: never verifiers' default ``prime`` runtime, so nothing leaves this machine.
The harness process talks to verifiers' interception proxy, which forwards to the episode's
recording-proxy URL. A fresh `Env` per episode keeps concurrent episodes apart (an `Env` holds one
interception server while it serves). A task is named by its data's ``id`` (else its ``idx``, else its
position in the taskset).
"""

from __future__ import annotations

import itertools
import os
from typing import Any

from nenyax.adapters.verifiers.library import Library
from nenyax.adapters.verifiers.options import VerifiersSpec
from nenyax.adapters.verifiers.records import KEY_VAR, digest_rows, error_text, jsonable, messages, numbers
from nenyax.adapters.verifiers.reference import DEFAULT_V1, fill
from nenyax.adapters.verifiers.resolve import Resolved
from nenyax.core import (
    BadURIError,
    Capabilities,
    Judgment,
    Manifest,
    Mode,
    NativeEpisode,
    NativeResult,
    RolloutEnvironment,
    Split,
    Status,
    UnsupportedPolicyError,
    UsageError,
)
from nenyax.core.toolkit.failures import describe
from nenyax.core.toolkit.tasks import one_split_ids, pick

MAX_TASKS = 100_000
"""How many tasks of an unbounded (streamed) taskset are listed."""

PASS_AT = 1.0
"""A v1 trace counts as passed at this reward: v1 has no pass threshold of its own, and 1.0 is the one
its bundled ``best_of_n`` env counts a task solved at (``--env.threshold``)."""


def _task_ids(tasks: list[Any]) -> list[str]:
    for field in ("id", "idx"):
        ids = [getattr(task.data, field, None) for task in tasks]
        if all(i is not None for i in ids) and len(set(map(str, ids))) == len(ids):
            return [str(i) for i in ids]
    return [str(i) for i in range(len(tasks))]


class V1VerifiersEnvironment(RolloutEnvironment):
    """A verifiers v1 taskset, each episode played by verifiers' own ``null`` harness in a subprocess."""

    def __init__(self, spec: VerifiersSpec, library: Library, resolved: Resolved) -> None:
        self.spec = spec
        self.resolved = resolved
        self.config = self._config()
        env = self._build()
        taskset = env.taskset
        try:
            tasks = list(itertools.islice(iter(taskset), MAX_TASKS))
        except Exception as exc:
            raise UsageError(f"Loading the tasks of {spec.uri} failed: {describe(exc)}.") from exc
        if not tasks:
            raise BadURIError(f"{spec.uri} has no tasks: its taskset loaded none.")
        self.tasks = dict(zip(_task_ids(tasks), tasks, strict=True))
        golds = [getattr(task.data, "answer", None) for task in tasks]
        has_reference = all(g is not None and str(g).strip() for g in golds)
        toolsets = type(taskset).task_type().toolsets(taskset.config.task)
        rewards = sorted(getattr(type(tasks[0]), "_reward_names", ()) or ())
        super().__init__(
            Manifest(
                uri=spec.uri,
                format="verifiers",
                format_version=library.version,
                mode=Mode.ROLLOUT,
                name=spec.attr or spec.module,
                description=(type(taskset).__doc__ or "").strip().split("\n")[0],
                splits=(Split(name="tasks", count=len(tasks)),),
                observation="chat messages: the task's system prompt and prompt",
                action="an assistant message (the null harness's chat loop)",
                extra={
                    "api": "v1",
                    "taskset": f"{type(taskset).__module__}.{type(taskset).__qualname__}",
                    "harness": "null",
                    "runtime": "subprocess",
                    "tasks_sha256": digest_rows(task.data for task in tasks),
                    "args": jsonable(spec.args),
                    "rewards": rewards,
                    **({} if has_reference else {"no_reference": "Some tasks have no answer field, so no reference."}),
                },
                capabilities=Capabilities(
                    stable_task_ids=True,
                    reference_policy=has_reference,
                    multi_turn=bool(toolsets) or (spec.max_turns or 1) > 1,
                    max_turns=spec.max_turns,
                ),
            )
        )

    def _config(self) -> Any:
        import verifiers.v1 as vf

        agent: dict[str, Any] = {"harness": {"id": "null"}, "runtime": {"type": "subprocess"}}
        if self.spec.max_turns is not None:
            agent["max_turns"] = self.spec.max_turns
        data = {"taskset": {"id": self.resolved.taskset_id, **self.resolved.config}, "agent": agent}
        try:
            return vf.resolve_env_config(data)
        except Exception as exc:
            first = " ".join(str(exc).split())[:300]
            raise BadURIError(f"The arguments of {self.spec.uri} do not fit its taskset's config: {first}.") from exc

    def _build(self) -> Any:
        import verifiers.v1 as vf

        try:
            env = vf.load_environment(self.config)
        except Exception as exc:
            raise UsageError(f"Building the verifiers environment of {self.spec.uri} failed: {describe(exc)}.") from exc
        if self.resolved.taskset is not None:
            env.taskset = self.resolved.taskset  # the instance the URI named, not a copy built from its config
        return env

    def task_ids(self, split: str | None = None, limit: int | None = None) -> list[str]:
        """The tasks' ids, in the taskset's order."""
        return one_split_ids(self.uri, self.tasks, split, limit)

    def _task(self, task_id: str | None) -> Any:
        return self.tasks[pick(self.uri, task_id, self.tasks)]

    async def run(self, episode: NativeEpisode) -> NativeResult:
        """One `run_episode` of the task in a fresh `Env`, graded by the task's rewards."""
        import verifiers.v1 as vf

        task = self._task(episode.task_id)
        os.environ[KEY_VAR] = episode.api_key
        ctx = vf.ModelContext(
            model=episode.model, client=vf.EvalClientConfig(base_url=episode.base_url, api_key_var=KEY_VAR)
        )
        env = self._build()
        async with env.serving():
            result = await env.run_episode(task, ctx)
        return self._result(result)

    def _result(self, result: Any) -> NativeResult:
        trace = result.traces[-1] if result.traces else None
        transcript = messages(trace.messages) if trace is not None else ()
        errors = [*result.errors, *(trace.errors if trace is not None else ())]
        info = {
            "trace_id": jsonable(getattr(trace, "id", None)),
            "stop_condition": jsonable(getattr(trace, "stop_condition", None)),
            "errors": [error_text(e) for e in errors],
        }
        if result.is_timeout:
            why = (
                f"A verifiers deadline expired: {error_text(errors[-1])}" if errors else "A verifiers deadline expired."
            )
            return NativeResult(judgment=None, status=Status.TIMEOUT, error=why, messages=transcript, info=info)
        if trace is None or errors or not result.ok:
            why = error_text(errors[-1]) if errors else "the episode ran no agent"
            error = f"The verifiers episode failed: {why}"
            return NativeResult(judgment=None, status=Status.ENV_ERROR, error=error, messages=transcript, info=info)
        unscored = sorted(name for name, reward in trace.rewards.items() if reward is None)
        if unscored:
            error = f"The rewards {', '.join(unscored)} did not run."
            return NativeResult(
                judgment=None, status=Status.VERIFIER_ERROR, error=error, messages=transcript, info=info
            )
        components = {name: float(reward.score) for name, reward in trace.rewards.items()}
        for name, value in numbers(trace.metrics).items():
            components[name if name not in components else f"metric:{name}"] = value
        score = float(trace.reward)
        weights = ", ".join(f"{n}x{r.weight:g}" for n, r in trace.rewards.items())
        verdict = Judgment(
            score=score,
            passed=score >= PASS_AT,
            components=components,
            feedback=f"weighted sum of rewards ({weights}); passed means reward >= {PASS_AT:g}",
            judge="verifiers:v1-rewards",
        )
        return NativeResult(judgment=verdict, messages=transcript, info=info)

    def reference_reply(self, task_id: str | None, messages: list[dict[str, Any]]) -> str | dict[str, Any]:
        """The task's ``answer`` field in the reference template (``\\boxed{answer}`` by default)."""
        gold = getattr(self._task(task_id).data, "answer", None)
        if gold is None or not str(gold).strip():
            raise UnsupportedPolicyError(f"{self.uri} has no answer for task {task_id}, so no reference policy.")
        return fill(self.spec.reference or DEFAULT_V1, str(gold))
