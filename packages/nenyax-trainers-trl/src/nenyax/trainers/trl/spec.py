"""`NenyaxSpec`: a Nenyax environment as TRL's ``train_dataset``, ``rollout_func`` and ``reward_funcs``.

    spec = NenyaxSpec("reasoning_gym:basic_arithmetic?size=200")
    trainer = GRPOTrainer(model=model, args=config, train_dataset=spec.train_dataset,
                          rollout_func=spec.rollout_func, reward_funcs=spec.reward_funcs)

TRL hands `rollout_func` its batch of prompts, each already repeated ``num_generations`` times. Each
prompt is a task's row (`nenyax.core.task_rows`): one episode is played per prompt, in any mode (a step
environment's own chat, a verifiers loop, a harbor agent), by the trainer's own model object
(`LocalProvider.live`: its weights as they are at that step, no copy) through the recording Endpoint, so every
model call is recorded with the exact ids and logprobs TRL then trains on (`nenyax.core.merged_samples`: the
environment's and tools' tokens between two completions are in the completion, masked 0 by ``env_mask``).

The judgment's score is the reward (``nenyax_score``; `NenyaxSpec.component` makes a reward of one named
component). An episode that failed for infrastructure (`infra_error`, `env_error`, `verifier_error`,
`timeout`) is never a reward of 0: its reward is None (TRL leaves it out of its group's baseline and gives it
no advantage), its mask is all zero, and it is counted in the trainer's logged metrics (``nenyax/untrainable``,
``nenyax/status/<status>``). Every episode is streamed to a run directory (``spec.run_dir``) that
``nenyax view`` and ``nenyax export`` read.
"""

from __future__ import annotations

import asyncio
import functools
import urllib.request
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

from nenyax.core import (
    Endpoint,
    JsonlSink,
    Judging,
    PolicyInfo,
    StepEnvironment,
    TokenSample,
    ToolSession,
    Trajectory,
    load,
    merged_samples,
    new_run_dir,
    task_rows,
)
from nenyax.core.errors import UsageError
from nenyax.core.toolkit.loops import LoopThread, run_sync
from nenyax.providers.local.provider import LocalProvider
from nenyax.providers.local.token_server import TokenServerProvider
from nenyax.trainers.trl.tool_env import Episode, ToolEnvironment, _Relay, environment_class, episode_scores

POLICY = "policy"
"""The name the trainer's live model is served under."""

RewardFunc = Callable[..., list[float | None]]


def _key(prompt: Any) -> bytes:
    """The prompt as a lookup key: a dataset stores messages as Arrow structs, which give every message the
    keys of all (None where it had none), so None-valued keys are left out on both sides."""
    return orjson.dumps(_without_nones(prompt), option=orjson.OPT_SORT_KEYS)


def _without_nones(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nones(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_without_nones(v) for v in value]
    return value


class NenyaxSpec:
    """A Nenyax environment for TRL's GRPOTrainer (see the module docstring)."""

    def __init__(
        self,
        uri: str,
        *,
        split: str | None = None,
        limit: int | None = None,
        seed: int = 0,
        runs: str | Path = "runs",
        registry: Any = None,
        judges: Sequence[str] = (),
        score: str | None = None,
    ) -> None:
        """Load the environment at `uri` and list its tasks (`split`, at most `limit`) as the dataset.

        Every episode is played with `seed` and streamed to a new run directory under `runs`
        (``spec.run_dir``), which ``nenyax view`` and ``nenyax export`` read. `judges` (each ``NAME[?options]``)
        judge every episode beside the format's own verifier, and the reward is the score `score` composes
        (`nenyax.core.engine.judging`)."""
        self.judging = Judging.build(judges, score, registry)
        self.env = load(uri, registry=registry)
        self.seed = seed
        self._tasks: dict[bytes, str] = {}
        rows = []
        self._task_ids: list[str] = []
        for row in task_rows(self.env, split=split, limit=limit):
            self._task_ids.append(row["task_id"])
            # TRL gives rollout_func the prompts only: each must say which task it is. A step environment's
            # first chat does (tasks that show the same chat are played as the first of them); a native loop
            # or a harness builds its prompt while it plays, so its row names the task.
            prompt = row["prompt"] or [{"role": "user", "content": f"Task {row['task_id']} of {self.env.uri}."}]
            self._tasks.setdefault(_key(prompt), row["task_id"])
            rows.append({"prompt": prompt, "task_id": row["task_id"]})
        if not rows:
            raise UsageError(f"{self.env.uri} lists no task to train on.")
        self._task_set = frozenset(self._task_ids)
        import datasets

        self.train_dataset = datasets.Dataset.from_list(rows)
        self.reward_funcs: list[RewardFunc] = [nenyax_score]
        self.run_dir = new_run_dir(runs, self.env.manifest, {"trainer": "trl"})
        self._sink = JsonlSink(self.run_dir / "trajectories.jsonl")
        self._provider: LocalProvider | TokenServerProvider | None = None
        self._plays: Counter[str] = Counter()
        self.counts: Counter[str] = Counter()
        """Episodes played, by status; ``forked``: episodes whose later calls TRL could not be given."""
        self.loop = LoopThread("nenyax-trl-tools")
        """Where `environment_factory`'s episodes play (TRL calls them from its own threads and loop)."""
        self._batches = 0

    @property
    def tool_dataset(self) -> Any:
        """The tasks as the rows `environment_factory` trains on: each names its task (``task_id``), and its
        `reset` gives the task's text (TRL appends it to an empty user message)."""
        import datasets

        return datasets.Dataset.from_list([{"task_id": task} for task in self._task_ids])

    @functools.cached_property
    def environment_factory(self) -> type[ToolEnvironment]:
        """The environment as TRL's ``environment_factory``: a class with one method per tool (see `tool_env`).

        For step environments with tools whose sessions offer them as function schemas (ORS); train it on
        `tool_dataset`, with `reward_funcs`."""
        if not isinstance(self.env, StepEnvironment):
            msg = (
                f"{self.env.uri} runs its own loop ({self.env.manifest.mode} mode): TRL's tool loop cannot play it; "
                "use NenyaxSpec.rollout_func."
            )
            raise UsageError(msg)
        if not self.env.manifest.capabilities.tools:
            msg = f"{self.env.uri} offers the model no tools, so TRL's tool loop has nothing to call; use rollout_func."
            raise UsageError(msg)
        tools = self.loop.run(self._tool_specs())
        return environment_class(self, tools, name="NenyaxToolEnvironment")

    async def _tool_specs(self) -> list[dict[str, Any]]:
        assert isinstance(self.env, StepEnvironment)
        session = await self.env.asession(task=self._task_ids[0], seed=self.seed)
        try:
            if not isinstance(session, ToolSession):
                msg = (
                    f"{self.env.uri}'s sessions do not offer their tools as function schemas "
                    "(nenyax.core.ToolSession), so TRL's tool loop cannot call them; use rollout_func."
                )
                raise UsageError(msg)
            return session.tool_specs()
        finally:
            await session.aclose()

    async def open_episode(self, task: str, tools: frozenset[str]) -> Episode:
        """Start an episode of `task` played through TRL's tool loop (on `loop`)."""
        if task not in self._task_set:
            msg = f"Task {task!r} is not a task of {self.env.uri}; train on NenyaxSpec.tool_dataset."
            raise UsageError(msg)
        relay = _Relay(PolicyInfo(kind="trainer", name="trl:environment_factory"))
        played = asyncio.create_task(self._episode(relay, task, f"trl-batch-{self._batches}:{task}", relay))
        return Episode(relay, played, tools)

    def score_episodes(self, environments: list[Any], completions: list[Any], log_metric: Any) -> list[float | None]:
        """End the batch's `environment_factory` episodes with the model's last replies; their scores."""
        scores, batch = episode_scores(environments, completions)
        self._batches += 1
        self.counts.update({name: count for name, count in batch.items() if count})
        if log_metric is not None:
            log_metric("nenyax/untrainable", float(batch["untrainable"]))
            for name, count in batch.items():
                if name.startswith("status/"):
                    log_metric(f"nenyax/{name}", float(count))
        return scores

    def endpoint(self, trainer: Any) -> Endpoint:
        """The Endpoint over the trainer's own inference, sampling as the trainer's arguments say: its model
        object, or (``use_vllm=True, vllm_mode="server"``) the vLLM server TRL syncs its weights into before
        each rollout, reached token in, token out (the ``tokens`` provider)."""
        args = trainer.args
        if self._provider is None:
            tokenizer = trainer.processing_class
            if not getattr(tokenizer, "chat_template", None):
                msg = "The trainer's tokenizer has no chat template, so its model cannot play chat episodes."
                raise UsageError(msg)
            state = trainer.state
            revision = lambda: f"trl:step-{state.global_step}"  # noqa: E731 - read at each call
            if getattr(args, "use_vllm", False):
                self._provider = _vllm_server(args, tokenizer, revision)
            else:
                model = trainer.accelerator.unwrap_model(trainer.model)
                self._provider = LocalProvider.live(model, tokenizer, name=POLICY, revision=revision)
        sampling: dict[str, Any] = {"temperature": args.temperature, "max_tokens": args.max_completion_length}
        if args.top_p is not None and args.top_p < 1.0:
            sampling["top_p"] = args.top_p
        return Endpoint.over(self._provider, POLICY, **sampling)

    def rollout_func(self, prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        """One episode per prompt with the trainer's model; what TRL trains on, and the rewards."""
        endpoint = self.endpoint(trainer)
        tasks = [self._task_of(prompt) for prompt in prompts]
        trajectories = run_sync(self._play(endpoint, tasks, step=trainer.state.global_step))
        if trajectories and not any(t.model_calls for t in trajectories):
            msg = (
                f"No episode of {self.env.uri} called the trainer's model: its own loop plays with a model or agent "
                "of its own, so TRL has nothing of its model to train on."
            )
            raise UsageError(msg)
        pad = _pad_id(trainer.processing_class)
        out: dict[str, list[Any]] = {k: [] for k in ("prompt_ids", "completion_ids", "logprobs", "env_mask")}
        out.update(nenyax_score=[], nenyax_components=[], nenyax_status=[])
        batch: Counter[str] = Counter()
        for trajectory in trajectories:
            status = trajectory.status.value
            batch[f"status/{status}"] += 1
            samples, forks = merged_samples(trajectory)
            batch["forked"] += bool(forks.count)
            # TRL takes one sequence per episode: the first sample (a forked episode's later calls are left out,
            # and counted).
            sample = _trainable(samples[0]) if samples else None
            batch["untrainable"] += sample is None
            prompt_ids, completion_ids, logprobs, mask = _nothing(pad) if sample is None else _trained_on(sample)
            out["prompt_ids"].append(prompt_ids)
            out["completion_ids"].append(completion_ids)
            out["logprobs"].append(logprobs)
            out["env_mask"].append(mask)
            out["nenyax_score"].append(None if sample is None else sample.reward)
            judgment = None if sample is None else trajectory.judgment
            out["nenyax_components"].append({} if judgment is None else dict(judgment.components))
            out["nenyax_status"].append(status)
        self.counts.update({name: count for name, count in batch.items() if count})
        _log(trainer, batch)
        return out

    @staticmethod
    def component(name: str) -> RewardFunc:
        """A reward function of one named component of the judgment (None where an episode has none)."""

        def reward(nenyax_components: list[dict[str, float]], **_: Any) -> list[float | None]:
            return [components.get(name) for components in nenyax_components]

        reward.__name__ = f"nenyax_{name}"
        return reward

    async def _play(self, endpoint: Endpoint, tasks: list[str], *, step: int) -> list[Trajectory]:
        groups = [f"trl-step-{step}:{task}" for task in tasks]  # TRL's copies of one prompt: one group
        # A group judge sees each group once all of it has finished (the episodes all play at once here).
        judging = self.judging.grouped(Counter(groups)) if self.judging is not None else None
        return list(
            await asyncio.gather(
                *(
                    self._episode(endpoint, task, group, judging=judging)
                    for task, group in zip(tasks, groups, strict=True)
                )
            )
        )

    async def _episode(self, policy: Any, task: str, group_id: str, *observers: Any, judging: Any = None) -> Trajectory:
        """One episode of `task`, streamed to the run directory. Each episode of a task gets the next sample
        number (taken before anything is awaited, so in the order the episodes were asked for): the model's
        sampling is seeded from the episode (task, seed, sample), so the copies of one prompt in a group would
        otherwise say the same thing."""
        sample = self._plays[task]
        self._plays[task] += 1
        return await self.env.arollout(
            policy,
            task=task,
            seed=self.seed,
            sample=sample,
            group_id=group_id,
            observers=[self._sink, *observers],
            judges=judging or self.judging or (),
        )

    def _task_of(self, prompt: Any) -> str:
        task = self._tasks.get(_key(prompt))
        if task is None:
            msg = f"A prompt TRL handed over is not a task of {self.env.uri}; train on NenyaxSpec.train_dataset."
            raise UsageError(msg)
        return task


def _log(trainer: Any, batch: Counter[str]) -> None:
    """Add the batch's counts to what the trainer logs at its next logging step (TRL's own metrics table:
    `_metrics[mode]`, averaged over the steps between two logs)."""
    metrics = getattr(trainer, "_metrics", None)
    if metrics is None:
        return
    mode = "train" if trainer.model.training else "eval"
    for name in ("untrainable", "forked"):
        metrics[mode][f"nenyax/{name}"].append(float(batch[name]))
    for name, count in batch.items():
        if name.startswith("status/"):
            metrics[mode][f"nenyax/{name}"].append(float(count))


def _vllm_server(args: Any, tokenizer: Any, revision: Callable[[], str]) -> TokenServerProvider:
    """TRL's vLLM server (``trl vllm-serve``, which runs vLLM's own), sampled token in, token out."""
    if getattr(args, "vllm_mode", "server") != "server":
        msg = (
            f"NenyaxSpec samples through TRL's vLLM in server mode only, not vllm_mode={args.vllm_mode!r} (vLLM "
            "inside TRL's process is out of its reach): set vllm_mode='server' and run `trl vllm-serve`, or "
            "use_vllm=False to sample the trainer's model object."
        )
        raise UsageError(msg)
    base = getattr(args, "vllm_server_base_url", None) or f"http://{args.vllm_server_host}:{args.vllm_server_port}"
    try:  # the name the server serves the model under, as TRL's own VLLMClient reads it
        with urllib.request.urlopen(f"{base.rstrip('/')}/v1/models", timeout=30) as response:
            served = orjson.loads(response.read())["data"][0]["id"]
    except (OSError, ValueError, KeyError, IndexError) as exc:
        msg = f"TRL's vLLM server at {base} does not answer /v1/models ({type(exc).__name__}: {exc}); is it running?"
        raise UsageError(msg) from exc
    return TokenServerProvider(base_url=base, served_model=served, tokenizer=tokenizer, revision=revision)


def _pad_id(tokenizer: Any) -> int:
    pad = tokenizer.pad_token_id
    return int(pad if pad is not None else tokenizer.eos_token_id)


def _trainable(sample: TokenSample) -> TokenSample | None:
    """The sample, where TRL may learn from it: a trainable status, and the sampler's logprobs recorded."""
    return sample if sample.trainable and sample.logprobs is not None else None


def _trained_on(sample: TokenSample) -> tuple[list[int], list[int], list[float], list[int]]:
    logprobs = sample.logprobs or ()
    return list(sample.prompt_ids), list(sample.completion_ids), list(logprobs), list(sample.loss_mask)


def _nothing(pad: int) -> tuple[list[int], list[int], list[float], list[int]]:
    """A completion TRL must be handed for an episode it may not learn from: one masked token."""
    return [pad], [pad], [0.0], [0]


def nenyax_score(
    nenyax_score: list[float | None] | None = None,
    environments: list[Any] | None = None,
    completions: list[Any] | None = None,
    log_metric: Any = None,
    **_: Any,
) -> list[float | None]:
    """The episodes' judged scores (None where an episode failed for infrastructure: no reward, never 0):
    those `rollout_func` played, or those of `environment_factory`, ended here with the model's last reply."""
    if nenyax_score is not None:
        return nenyax_score
    if environments is not None and completions is not None:
        specs = {id(e._spec): e._spec for e in environments if isinstance(e, ToolEnvironment)}
        if len(specs) == 1:
            return next(iter(specs.values())).score_episodes(environments, completions, log_metric)
    msg = (
        "nenyax_score scores the episodes of one NenyaxSpec: pass GRPOTrainer its rollout_func, or its "
        "environment_factory, beside reward_funcs."
    )
    raise UsageError(msg)
