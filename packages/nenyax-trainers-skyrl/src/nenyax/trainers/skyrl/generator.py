"""`NenyaxGenerator`: SkyRL's ``GeneratorInterface`` playing Nenyax episodes of any mode on SkyRL's own engine.

Modelled on SkyRL's ``HarborGenerator``: each prompt of a ``GeneratorInput`` is a row of `skyrl_rows` whose
``env_extras`` name a Nenyax task; the episode is played by Nenyax (a step environment's own chat, a verifiers
loop, a harbor agent through the recording proxy) with ``Endpoint("openai:<model>", base_url=<engine>/v1)``,
the inference engine's OpenAI-compatible endpoint, which records every call's prompt and completion token ids
and logprobs as the engine returned them (vLLM's ``return_token_ids``). SkyRL gets one row per prompt from
`nenyax.core.merged_samples`: ``prompt_token_ids``, ``response_ids`` (the sampled tokens, the environment's
tokens between two turns included and masked 0), ``loss_masks``, ``rollout_logprobs`` (0.0 where masked), the
judged score as its reward, never re-tokenized.

SkyRL repeats each prompt ``n_samples_per_prompt`` times (`TrajectoryID.repetition_id`): the copies are one
Nenyax group, the same task and seed, each its own sample number. An episode that failed for infrastructure
(``infra_error``, ``env_error``, ``verifier_error``, ``timeout``), or recorded no token ids, is never a reward
of 0: as HarborGenerator does with its failed trials, every row of its group is a one-token placeholder with
loss mask ``[0]`` and stop reason ``error`` (its reward field 0.0 only because SkyRL's type needs a float; the
group is out of the advantage's baseline), and ``rollout_metrics`` counts it.
"""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nenyax.core import (
    Endpoint,
    Environment,
    JsonlSink,
    Judging,
    TokenSample,
    Trajectory,
    merged_samples,
    new_run_dir,
)
from nenyax.core.errors import UsageError
from nenyax.trainers.skyrl.text_env import environment

_UNAVAILABLE: str | None = None
"""Why SkyRL's generator interface does not import here (None: it does)."""


def _skyrl_interface() -> tuple[type, str | None]:
    """SkyRL's ``GeneratorInterface``, or a stand-in and the reason it does not import: skyrl is an extra, and
    skyrl 0.3.0's generator module does not import below Python 3.12 (pydantic refuses a ``typing.TypedDict``
    in ``skyrl/tinker/types.py``). This module imports either way; the generator says why in one sentence."""
    try:
        from skyrl.train.generators.base import GeneratorInterface
    except Exception as exc:  # noqa: BLE001 - whatever stops it importing is the reason to give
        said = str(exc).strip().splitlines()[0].rstrip(".") if str(exc).strip() else ""
        return object, f"{type(exc).__name__}: {said}" if said else type(exc).__name__
    return GeneratorInterface, None


if TYPE_CHECKING:
    from skyrl.train.generators.base import GeneratorInput, GeneratorInterface, GeneratorOutput, TrajectoryID
else:
    GeneratorInterface, _UNAVAILABLE = _skyrl_interface()

SAMPLING = {"temperature": "temperature", "top_p": "top_p", "top_k": "top_k", "max_tokens": "max_tokens"}
"""SkyRL's engine sampling keys (vLLM's) that the Endpoint passes on, by the name it takes them under."""


class NenyaxGenerator(GeneratorInterface):
    """Nenyax episodes as SkyRL's generator (see the module docstring).

    In a SkyRL entrypoint (a `BasePPOExp` subclass), ``get_generator(cfg, tokenizer, inference_engine_client)``
    returns ``NenyaxGenerator(inference_engine_client, model=cfg.generator.inference_engine.served_model_name)``.
    """

    def __init__(
        self,
        inference_engine_client: Any = None,
        *,
        base_url: str | None = None,
        model: str | None = None,
        sampling: dict[str, Any] | None = None,
        seed: int = 0,
        runs: str | Path | None = "runs",
        judges: Sequence[str] = (),
        score: str | None = None,
    ) -> None:
        """Sample the engine at `base_url` (default: the client's ``get_endpoint_url()``; ``/v1`` is added),
        serving `model` (default: the first its ``/v1/models`` lists). `sampling` (temperature, top_p,
        max_tokens...) applies where SkyRL's input gives none. Every episode is played with `seed` (a row's
        ``nenyax_seed`` wins) and, where `runs` is set, streamed to a run directory under it (one per
        environment) that ``nenyax view`` and ``nenyax export`` read. `judges` and `score` as for
        ``Environment.arollout``."""
        if _UNAVAILABLE is not None:
            msg = (
                f"NenyaxGenerator implements SkyRL's GeneratorInterface, which does not import here ({_UNAVAILABLE}); "
                "install nenyax-trainers-skyrl[generator] on Python 3.12 or later."
            )
            raise UsageError(msg)
        if base_url is None:
            if inference_engine_client is None:
                raise UsageError("Give NenyaxGenerator SkyRL's inference_engine_client or the engine's base_url.")
            base_url = str(inference_engine_client.get_endpoint_url())
        self.base_url = base_url.rstrip("/").removesuffix("/v1")
        self.inference_engine_client = inference_engine_client
        self.model = model or _served_model(self.base_url)
        self.sampling = dict(sampling or {})
        self.seed = seed
        self.runs = runs
        self.judging = Judging.build(judges, score)
        self.run_dirs: dict[str, Path] = {}
        """Where each environment's episodes were streamed, by URI."""
        self._sinks: dict[str, JsonlSink] = {}
        self.trajectories: list[Trajectory] = []
        """The last batch's judged episodes, in the input's order."""

    def endpoint(self, sampling_params: dict[str, Any] | None) -> Endpoint:
        """The recording Endpoint over the engine, sampling as SkyRL's input asks (else as this generator does)."""
        params = {**self.sampling}
        for theirs, ours in SAMPLING.items():
            if sampling_params and sampling_params.get(theirs) is not None:
                params[ours] = sampling_params[theirs]
        if sampling_params and sampling_params.get("max_generate_length") is not None:
            params["max_tokens"] = sampling_params["max_generate_length"]
        return Endpoint(f"openai:{self.model}", base_url=f"{self.base_url}/v1", **params)

    async def generate(self, input_batch: GeneratorInput) -> GeneratorOutput:
        """One Nenyax episode per prompt, played concurrently; one row per prompt, in the input's order."""
        prompts = input_batch["prompts"]
        extras = input_batch.get("env_extras") or [{} for _ in prompts]
        from skyrl.train.generators.base import TrajectoryID

        ids = input_batch.get("trajectory_ids") or [
            TrajectoryID(instance_id=str(i), repetition_id=0) for i in range(len(prompts))
        ]
        if not len(prompts) == len(extras) == len(ids):
            msg = f"The batch has {len(prompts)} prompts, {len(extras)} env_extras and {len(ids)} trajectory_ids."
            raise UsageError(msg)
        endpoint = self.endpoint(input_batch.get("sampling_params"))
        episodes = [self._episode(endpoint, extra, tid) for extra, tid in zip(extras, ids, strict=True)]
        self.trajectories = list(await asyncio.gather(*episodes))
        return self._output(self.trajectories, ids)

    async def _episode(self, endpoint: Endpoint, extras: dict[str, Any], tid: TrajectoryID) -> Trajectory:
        uri, task = extras.get("nenyax_uri"), extras.get("nenyax_task")
        if not uri or task is None:
            msg = "A row NenyaxGenerator was handed names no Nenyax task in env_extras; make the rows with skyrl_rows."
            raise UsageError(msg)
        env = environment(str(uri))
        return await env.arollout(
            endpoint,
            task=str(task),
            seed=int(extras.get("nenyax_seed", self.seed)),
            sample=int(tid.repetition_id),
            group_id=f"skyrl:{tid.instance_id}",
            observers=self._observers(env),
            judges=self.judging or (),
        )

    def _observers(self, env: Environment) -> list[Any]:
        if self.runs is None:
            return []
        if env.uri not in self._sinks:
            run_dir = new_run_dir(self.runs, env.manifest, {"trainer": "skyrl"})
            self.run_dirs[env.uri] = run_dir
            self._sinks[env.uri] = JsonlSink(run_dir / "trajectories.jsonl")
        return [self._sinks[env.uri]]

    def _output(self, trajectories: list[Trajectory], ids: list[TrajectoryID]) -> GeneratorOutput:
        counts: Counter[str] = Counter()
        samples: list[TokenSample | None] = []
        for trajectory in trajectories:
            counts[f"nenyax/status/{trajectory.status.value}"] += 1
            rows, forks = merged_samples(trajectory)
            counts["nenyax/forked"] += bool(forks.count)
            # One row per prompt: a forked episode's later calls are left out (and counted).
            sample = rows[0] if rows else None
            samples.append(sample if sample is not None and sample.trainable and sample.logprobs is not None else None)
        masked = {tid.instance_id for tid, sample in zip(ids, samples, strict=True) if sample is None}
        out: dict[str, list[Any]] = {
            k: []
            for k in ("prompt_token_ids", "response_ids", "rewards", "loss_masks", "stop_reasons", "rollout_logprobs")
        }
        for trajectory, tid, sample in zip(trajectories, ids, samples, strict=True):
            if sample is None or tid.instance_id in masked:
                counts["nenyax/masked"] += 1
                out["prompt_token_ids"].append([0])
                out["response_ids"].append([0])
                out["rewards"].append(0.0)
                out["loss_masks"].append([0])
                out["stop_reasons"].append("error")
                out["rollout_logprobs"].append([0.0])
                continue
            out["prompt_token_ids"].append(list(sample.prompt_ids))
            out["response_ids"].append(list(sample.completion_ids))
            out["rewards"].append(float(sample.reward or 0.0))
            out["loss_masks"].append(list(sample.loss_mask))
            out["stop_reasons"].append(_stop_reason(trajectory, sample))
            out["rollout_logprobs"].append(list(sample.logprobs or ()))
        kept = [r for r, m in zip(out["rewards"], out["loss_masks"], strict=True) if any(m)]
        metrics: dict[str, Any] = {name: float(count) for name, count in counts.items()}
        metrics["generate/num_masked_instances"] = float(len(masked))
        if kept:
            metrics["generate/avg_score"] = sum(kept) / len(kept)
        output: GeneratorOutput = {  # SkyRL's TypedDict: a plain dict at run time
            "prompt_token_ids": out["prompt_token_ids"],
            "response_ids": out["response_ids"],
            "rewards": out["rewards"],
            "loss_masks": out["loss_masks"],
            "stop_reasons": out["stop_reasons"],
            "rollout_metrics": metrics,
            "rollout_logprobs": out["rollout_logprobs"],
            "trajectory_ids": list(ids),
        }
        return output


def _stop_reason(trajectory: Trajectory, sample: TokenSample) -> str:
    """Why the sample's last call stopped, as the engine said (``stop``, ``length``); ``stop`` where unsaid."""
    last = trajectory.model_calls[sample.calls[-1]] if sample.calls else None
    reason = getattr(last, "finish_reason", None)
    return str(reason) if reason else "stop"


def _served_model(base_url: str) -> str:
    """The first model the engine serves (its ``/v1/models``), as SkyRL's own clients name it."""
    try:
        with urllib.request.urlopen(f"{base_url}/v1/models", timeout=30) as response:
            return str(json.loads(response.read())["data"][0]["id"])
    except (OSError, ValueError, KeyError, IndexError) as exc:
        msg = f"The inference engine at {base_url} does not answer /v1/models ({type(exc).__name__}: {exc})."
        raise UsageError(msg) from exc
