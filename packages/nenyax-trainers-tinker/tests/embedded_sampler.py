"""`EmbeddedSamplingClient`: a fake of the Tinker service's `SamplingClient`, backed by the real embedded model.

No Tinker service is reachable here (no network, no API key), so the tests sample with this instead: it has the
real client's ``sample`` / ``sample_async`` signatures, takes a real `tinker.ModelInput` of token ids and
`tinker.SamplingParams`, samples a continuation of exactly those ids with the embedded SmolLM2-135M-Instruct
(nenyax-providers-local's engine, no chat template applied), and returns tinker's own `SampleResponse` of
`SampledSequence` (the tokens, the stop token kept as Tinker keeps it, and the sampler's logprobs). `sampled`
records every call: what the cookbook's `Trajectory` must then hold.
"""

from __future__ import annotations

import concurrent.futures
import uuid
from typing import Any

import numpy as np
import tinker
from tinker.lib.public_interfaces.api_future import AwaitableConcurrentFuture

from nenyax.providers.local.engine import Extras, shared_engine
from nenyax.providers.local.models import resolve_model
from nenyax.providers.local.sampling import Sampling


class EmbeddedSamplingClient:
    """The fake (see the module docstring); `fail` set: every call raises it, as an unreachable service would."""

    def __init__(self, stop_ids: set[int]) -> None:
        """`stop_ids`: the tokens the engine ends a reply on (the model's EOS); a stop token id outside them
        could not be honoured, so a request asking for one is refused."""
        self.engine = shared_engine(
            resolve_model("smollm2-135m"), device="cpu", dtype="float32", max_batch=8, batch_window_s=0.01
        )
        self.engine.load()
        self.stop_ids = stop_ids
        self.sampled: list[tuple[list[int], list[int], list[float]]] = []
        self.fail: BaseException | None = None

    def sample(
        self,
        prompt: tinker.ModelInput,
        num_samples: int,
        sampling_params: tinker.SamplingParams,
        include_prompt_logprobs: bool = False,
        topk_prompt_logprobs: int = 0,
        topk_sample_logprobs: int = 0,
        target_prompt_logprobs: Any = None,
        prompt_alt_tokens_k: int = 0,
        prompt_logprobs_last_n: int | None = None,
    ) -> AwaitableConcurrentFuture[tinker.SampleResponse]:
        assert isinstance(prompt, tinker.ModelInput), type(prompt)
        assert isinstance(sampling_params, tinker.SamplingParams), type(sampling_params)
        result: concurrent.futures.Future[tinker.SampleResponse] = concurrent.futures.Future()
        if self.fail is not None:
            result.set_exception(self.fail)
            return AwaitableConcurrentFuture(result)
        p = sampling_params
        stops = [] if p.stop is None else [p.stop] if isinstance(p.stop, str | int) else list(p.stop)
        assert {s for s in stops if isinstance(s, int)} <= self.stop_ids, f"stop ids {stops} are not the EOS"
        sampling = Sampling(
            temperature=p.temperature,
            top_p=p.top_p,
            top_k=max(p.top_k, 0),
            max_tokens=p.max_tokens or 16,
            seed=p.seed,
            stop=tuple(s for s in stops if isinstance(s, str)),
        )
        ids = prompt.to_ints()
        jobs = [self.engine.submit((), (), sampling, Extras(prompt_ids=tuple(ids))) for _ in range(num_samples)]

        def finished(_: Any) -> None:
            if result.done() or not all(job.done() for job in jobs):
                return
            try:
                sequences = []
                for completion in (job.result() for job in jobs):
                    tokens = np.asarray(completion.completion_ids, dtype=np.int32)
                    logprobs = np.asarray(completion.logprobs, dtype=np.float32)  # the wire's dtype
                    self.sampled.append((ids, tokens.tolist(), logprobs.tolist()))
                    sequences.append(
                        tinker.SampledSequence(
                            stop_reason="stop" if completion.finish_reason == "stop" else "length",
                            sequence_id=uuid.uuid4().hex,
                            tokens_np=tokens,
                            logprobs_np=logprobs,
                        )
                    )
                result.set_result(tinker.SampleResponse(sequences=sequences))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's await
                result.set_exception(exc)

        for job in jobs:
            job.add_done_callback(finished)
        return AwaitableConcurrentFuture(result)

    async def sample_async(
        self, prompt: tinker.ModelInput, num_samples: int, sampling_params: tinker.SamplingParams, **kw: Any
    ) -> tinker.SampleResponse:
        """tinker 0.38's deprecated spelling, which tinker-cookbook 0.5.8's `TinkerTokenCompleter` still calls."""
        return await self.sample(prompt, num_samples, sampling_params, **kw)
