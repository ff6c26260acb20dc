"""`NenyaxSpec`: a Nenyax environment as TRL's ``train_dataset``, ``rollout_func`` and ``reward_funcs``.

    spec = NenyaxSpec("reasoning_gym:basic_arithmetic?size=200")
    trainer = GRPOTrainer(model=model, args=config, train_dataset=spec.train_dataset,
                          rollout_func=spec.rollout_func, reward_funcs=spec.reward_funcs)

TRL hands `rollout_func` its batch of prompts, each already repeated ``num_generations`` times. Each
prompt is a task's row (`nenyax.core.export_tasks`'s rows): one episode is played per prompt, in any mode,
by the trainer's own model object (`LocalProvider.live`: its weights as they are at that step, no copy),
through the recording Endpoint, so every model call is recorded with the exact ids and logprobs TRL then
trains on (`nenyax.core.merged_samples`: the environment's and tools' tokens between two completions
are in the completion, masked 0 by ``env_mask``). The judgment's score is the reward; an episode that
failed for infrastructure (`infra_error`, `env_error`, `verifier_error`, `timeout`) has no reward
(None: TRL leaves it out of its group's baseline and gives it no advantage) and an all-zero mask.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import orjson

from nenyax.core import Endpoint, JsonlSink, TokenSample, Trajectory, load, merged_samples, new_run_dir, task_rows
from nenyax.core.errors import UsageError
from nenyax.core.toolkit.loops import run_sync
from nenyax.providers.local.provider import LocalProvider

POLICY = "policy"
"""The name the trainer's live model is served under."""


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
        run_dir: str | Path | None = None,
        registry: Any = None,
    ) -> None:
        """Load the environment at `uri` and list its tasks (`split`, at most `limit`) as the dataset.

        Every episode is played with `seed`; with `run_dir`, each is also streamed to that run directory
        (``trajectories.jsonl``), which ``nenyax view`` and ``nenyax export`` read."""
        self.env = load(uri, registry=registry)
        self.seed = seed
        self._tasks: dict[bytes, str] = {}
        rows = []
        for row in task_rows(self.env, split=split, limit=limit):
            # TRL gives rollout_func the prompts only: each must say which task it is. A step environment's
            # first chat does (tasks that show the same chat are played as the first of them); a native loop
            # or a harness builds its prompt while it plays, so its row names the task.
            prompt = row["prompt"] or [{"role": "user", "content": f"Task {row['task_id']} of {self.env.uri}."}]
            self._tasks.setdefault(_key(prompt), row["task_id"])
            rows.append({"prompt": prompt, "task_id": row["task_id"]})
        if not rows:
            raise UsageError(f"{self.env.uri} lists no task to train on.")
        import datasets

        self.train_dataset = datasets.Dataset.from_list(rows)
        self.reward_funcs = [nenyax_score]
        self.run_dir = None if run_dir is None else new_run_dir(run_dir, self.env.manifest, {"trainer": "trl"})
        self._sink = None if self.run_dir is None else JsonlSink(self.run_dir / "trajectories.jsonl")
        self._provider: LocalProvider | None = None
        self._plays: Counter[str] = Counter()
        self.counts: Counter[str] = Counter()
        """Episodes played, by status; ``forked``: episodes whose later calls TRL could not be given."""

    def endpoint(self, trainer: Any) -> Endpoint:
        """The Endpoint over the trainer's live model, sampling as the trainer's arguments say."""
        args = trainer.args
        if self._provider is None:
            model = trainer.accelerator.unwrap_model(trainer.model)
            tokenizer = trainer.processing_class
            if not getattr(tokenizer, "chat_template", None):
                raise UsageError("The trainer's tokenizer has no chat template, so its model cannot play chat episodes.")
            state = trainer.state
            self._provider = LocalProvider.live(model, tokenizer, name=POLICY, revision=lambda: f"trl:step-{state.global_step}")
        sampling: dict[str, Any] = {"temperature": args.temperature, "max_tokens": args.max_completion_length}
        if args.top_p is not None and args.top_p < 1.0:
            sampling["top_p"] = args.top_p
        return Endpoint.over(self._provider, POLICY, **sampling)

    def rollout_func(self, prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        """One episode per prompt with the trainer's model; what TRL trains on, and the rewards."""
        endpoint = self.endpoint(trainer)
        tasks = [self._task_of(prompt) for prompt in prompts]
        trajectories = run_sync(self._play(endpoint, tasks))
        pad = _pad_id(trainer.processing_class)
        out: dict[str, list[Any]] = {k: [] for k in ("prompt_ids", "completion_ids", "logprobs", "env_mask")}
        out["nenyax_score"], out["nenyax_status"] = [], []
        for trajectory in trajectories:
            self.counts[trajectory.status.value] += 1
            samples, forks = merged_samples(trajectory)
            if forks.count:
                self.counts["forked"] += 1
            sample = samples[0] if samples else None
            usable = sample is not None and sample.trainable and sample.logprobs is not None
            prompt_ids, completion_ids, logprobs, mask = _trained_on(sample, pad) if usable else _nothing(pad)
            out["prompt_ids"].append(prompt_ids)
            out["completion_ids"].append(completion_ids)
            out["logprobs"].append(logprobs)
            out["env_mask"].append(mask)
            out["nenyax_score"].append(sample.reward if usable and sample is not None else None)
            out["nenyax_status"].append(trajectory.status.value)
        return out

    async def _play(self, endpoint: Endpoint, tasks: list[str]) -> list[Trajectory]:
        observers = [] if self._sink is None else [self._sink]
        # Each episode of a task gets the next sample number: the model's sampling is seeded from the episode
        # (task, seed, sample), so the copies of one prompt in a group would otherwise say the same thing.
        numbered = []
        for task in tasks:
            numbered.append((task, self._plays[task]))
            self._plays[task] += 1
        return list(
            await asyncio.gather(
                *(
                    self.env.arollout(endpoint, task=task, seed=self.seed, sample=sample, observers=observers)
                    for task, sample in numbered
                )
            )
        )

    def _task_of(self, prompt: Any) -> str:
        task = self._tasks.get(_key(prompt))
        if task is None:
            msg = f"A prompt TRL handed over is not a task of {self.env.uri}; train on NenyaxSpec.train_dataset."
            raise UsageError(msg)
        return task


def _pad_id(tokenizer: Any) -> int:
    pad = tokenizer.pad_token_id
    return int(pad if pad is not None else tokenizer.eos_token_id)


def _trained_on(sample: TokenSample, pad: int) -> tuple[list[int], list[int], list[float], list[int]]:
    assert sample.logprobs is not None
    return list(sample.prompt_ids), list(sample.completion_ids), list(sample.logprobs), list(sample.loss_mask)


def _nothing(pad: int) -> tuple[list[int], list[int], list[float], list[int]]:
    """A completion TRL must be handed for an episode it may not learn from: one masked token."""
    return [pad], [pad], [0.0], [0]


def nenyax_score(prompts: list[Any], completions: list[Any], nenyax_score: list[float | None], **_: Any) -> list[float | None]:
    """The episodes' judged scores (None where an episode failed for infrastructure: no reward, never 0)."""
    return nenyax_score
