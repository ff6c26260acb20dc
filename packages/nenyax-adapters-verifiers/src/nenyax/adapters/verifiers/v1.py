"""verifiers v1 tasksets (verifiers 0.4): a `Taskset` of `Task`s, played by the `Env` verifiers would play it with.

That `Env` is the taskset's own when its package exports one (TextArena's game engine, an OpenEnv server,
Harbor's verifier: `nenyax.adapters.verifiers.pairing`), else `SingleAgentEnv` (one run of the task). Its
one seat is played by the episode's policy: the ``null`` harness (a plain chat loop, unless the taskset
brings a harness) in the ``subprocess`` runtime, never verifiers' default ``prime`` runtime, so nothing
leaves this machine. The harness process talks to verifiers' interception proxy, which forwards to the
episode's recording-proxy URL. A fresh `Env` per episode keeps concurrent episodes apart (an `Env` holds one
interception server while it serves). The rewards the task and the `Env` record judge the episode; when
none is recorded there is no judgment (verifiers' 0.0 is no verdict). A task is named by its data's ``id``
(else its ``idx``, else its position in the taskset).
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
from nenyax.core.toolkit.cache import cache_root
from nenyax.core.toolkit.failures import describe
from nenyax.core.toolkit.tasks import one_split_ids, pick

MAX_TASKS = 100_000
"""How many tasks of a long taskset are listed."""
MAX_ENDLESS_TASKS = 1_000
"""How many tasks of an endless taskset (``INFINITE``, such as TextArena's seeded games) are listed: each
may cost a game's reset to make, and verifiers itself runs such a taskset only bounded (``-n``)."""

_PLAIN_ENV = ("verifiers.v1.envs.single_agent.env", "SingleAgentEnv")
"""What verifiers plays a taskset with when the taskset brings no `Env` of its own: one run of the task."""

PASS_AT = 1.0
"""A v1 trace counts as passed at this reward: v1 has no pass threshold of its own, and 1.0 is the one
its bundled ``best_of_n`` env counts a task solved at (``--env.threshold``)."""


def harness_env() -> dict[str, str]:
    """Variables for the harness process: with ``PYTHONDONTWRITEBYTECODE`` set (as many container images set
    it), every episode's harness would compile its packages (openai...) from source again (about 40% of its
    start-up CPU); it keeps their bytecode in Nenyax's cache instead, out of every source tree."""
    if not os.environ.get("PYTHONDONTWRITEBYTECODE"):
        return {}
    return {"PYTHONDONTWRITEBYTECODE": "", "PYTHONPYCACHEPREFIX": str(cache_root() / "verifiers" / "pycache")}


def _task_ids(tasks: list[Any]) -> list[str]:
    for field in ("id", "idx"):
        ids = [getattr(task.data, field, None) for task in tasks]
        if all(i is not None for i in ids) and len(set(map(str, ids))) == len(ids):
            return [str(i) for i in ids]
    return [str(i) for i in range(len(tasks))]


class V1VerifiersEnvironment(RolloutEnvironment):
    """A verifiers v1 taskset, each episode played by the `Env` verifiers would play it with, its one seat in
    a subprocess (the ``null`` harness unless the taskset brings its own)."""

    env_class: type
    """The verifiers `Env` that plays an episode: the taskset's own, else `SingleAgentEnv`."""
    seat: str
    """The `Env`'s one seat, played by the episode's policy."""
    harness: str
    """The seat's harness id."""

    def __init__(self, spec: VerifiersSpec, library: Library, resolved: Resolved) -> None:
        self.spec = spec
        self.resolved = resolved
        self.config = self._config()
        env = self._build()
        taskset = env.taskset
        listed = MAX_TASKS if taskset.bounded else MAX_ENDLESS_TASKS
        try:
            tasks = list(itertools.islice(iter(taskset), listed))
        except Exception as exc:
            raise UsageError(f"Loading the tasks of {spec.uri} failed: {describe(exc)}.") from exc
        if not tasks:
            raise BadURIError(f"{spec.uri} has no tasks: its taskset loaded none.")
        self._refuse_containers(tasks)
        single = self.env_class.__module__ == _PLAIN_ENV[0] and self.env_class.__qualname__ == _PLAIN_ENV[1]
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
                observation=(
                    "chat messages: the task's system prompt and prompt"
                    if single
                    else f"chat messages: the task's prompt, then what {self.env_class.__name__} answers each move"
                ),
                action=f"an assistant message (the {self.harness} harness)",
                extra={
                    "api": "v1",
                    "taskset": f"{type(taskset).__module__}.{type(taskset).__qualname__}",
                    "env": f"{self.env_class.__module__}.{self.env_class.__qualname__}",
                    "seat": self.seat,
                    "harness": self.harness,
                    "runtime": "subprocess",
                    **({} if taskset.bounded else {"endless": f"an endless taskset: its first {listed} tasks"}),
                    "tasks_sha256": digest_rows(task.data for task in tasks),
                    "args": jsonable(spec.args),
                    "rewards": rewards,
                    **({} if has_reference else {"no_reference": "Some tasks have no answer field, so no reference."}),
                },
                capabilities=Capabilities(
                    stable_task_ids=True,
                    reference_policy=has_reference,
                    # The taskset's own Env plays the user (a game engine, a server): as many turns as it asks.
                    multi_turn=not single or bool(toolsets) or (spec.max_turns or 1) > 1,
                    max_turns=spec.max_turns,
                ),
            )
        )

    def _config(self) -> Any:
        """The env config verifiers would build for the taskset's own `Env` class, with its one seat played
        through the episode's proxy in the subprocess runtime (never the remote ``prime`` default)."""
        import verifiers.v1 as vf
        from verifiers.v1.configs.agent import AgentConfig
        from verifiers.v1.utils import loaders

        taskset_id = self.resolved.taskset_id
        try:
            self.env_class = loaders.environment_class(taskset_id)
            config_class = loaders.env_config_type(taskset_id)
        except Exception as exc:
            raise BadURIError(f"verifiers cannot tell which Env plays {self.spec.uri}: {describe(exc)}.") from exc
        played_by = f"{self.spec.uri} is played by {self.env_class.__name__}"
        seats = {n: f.default for n, f in config_class.model_fields.items() if isinstance(f.default, AgentConfig)}
        if len(seats) != 1:
            msg = (
                f"{played_by}, whose {len(seats)} seats ({', '.join(seats) or 'none'}) each need a player; Nenyax "
                "plays one policy per episode, so it cannot play this environment."
            )
            raise UsageError(msg)
        (self.seat, declared), *_ = seats.items()
        if declared.model is not None or declared.client is not None:
            msg = f"{played_by}, whose seat {self.seat!r} pins its own model, so no Nenyax policy could play it."
            raise UsageError(msg)
        agent: dict[str, Any] = {"runtime": {"type": "subprocess"}}
        if declared.harness is None and loaders.default_harness_id(taskset_id) != taskset_id:
            # No harness of its own: the plain chat loop, not verifiers' bash.
            agent["harness"] = {"id": "null", "env": harness_env()}
        if self.spec.max_turns is not None:
            agent["max_turns"] = self.spec.max_turns
        data = {"taskset": {"id": taskset_id, **self.resolved.config}, self.seat: agent}
        try:
            config = vf.resolve_env_config(data)
        except Exception as exc:
            first = " ".join(str(exc).split())[:300]
            raise BadURIError(f"The arguments of {self.spec.uri} do not fit its taskset's config: {first}.") from exc
        self.harness = config.agent_harnesses()[self.seat].id
        if loaders.harness_class(self.harness).NEEDS_CONTAINER:
            msg = (
                f"{played_by} with the harness {self.harness!r}, which needs a container runtime; Nenyax runs "
                "verifiers tasksets only in the subprocess runtime, so it cannot play this one."
            )
            raise UsageError(msg)
        return config

    def _refuse_containers(self, tasks: list[Any]) -> None:
        """One sentence when the tasks need a container (an image, or a task class that says so), as
        verifiers' own ``validate`` says for the subprocess runtime: Nenyax does not start one for them."""
        needs = [t for t in tasks if type(t).NEEDS_CONTAINER or getattr(t.data, "image", None)]
        if needs:
            first = needs[0]
            image = getattr(first.data, "image", None)
            why = f"runs in the image {image!r}" if image else f"is a {type(first).__name__}, which needs a container"
            msg = (
                f"{self.spec.uri} needs a container runtime ({len(needs)} of {len(tasks)} listed tasks, e.g. one "
                f"{why}); Nenyax runs verifiers tasksets only in the subprocess runtime, so it cannot play them."
            )
            raise UsageError(msg)

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
        if not trace.rewards:
            # verifiers sums no rewards to 0.0; that is no verdict, and never passes as a score here.
            error = (
                f"No reward judged the episode: {trace.task.type} has no @vf.reward and "
                f"{self.env_class.__name__} recorded none, so there is no score (verifiers would report 0)."
            )
            return NativeResult(
                judgment=None, status=Status.VERIFIER_ERROR, error=error, messages=transcript, info=info
            )
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
