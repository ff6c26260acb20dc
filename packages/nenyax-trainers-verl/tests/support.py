"""What the tests share: a stand-in for verl's server manager, and verl's own agent loop worker built on it.

verl samples on vLLM/SGLang servers (ray actors on GPUs), which cannot run on this CPU. `EmbeddedServers` stands
in for them: it has the server manager's one method the agent loop calls, ``generate(request_id, *, prompt_ids,
sampling_params, ...) -> TokenOutput``, and samples the embedded SmolLM2-135M token in, token out through
`nenyax.providers.local` (raw prompt ids, no chat template there), recording every call. Everything else is
verl's: its config (``ppo_trainer.yaml`` composed by Hydra), its dataset (``RLHFDataset`` over the parquet
`verl_rows` wrote), its `AgentLoopWorker` (the agent loop registry read from ``agent_loop_config_path``, one
loop instantiated per row, the outputs padded into a `DataProto`).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pandas as pd

from nenyax.core import TextRequest
from nenyax.providers.local.provider import LocalProvider
from nenyax.trainers.verl import AGENT_LOOP_CONFIG, verl_rows

MODEL = "smollm2-135m"
RESPONSE_LENGTH = 48


class EmbeddedServers:
    """Stands in for verl's vLLM/SGLang servers (which cannot run on a CPU): the embedded model, token in and
    token out, every call recorded as (request_id, prompt_ids, token_ids, log_probs)."""

    def __init__(self, max_tokens: int) -> None:
        self.provider = LocalProvider(device="cpu")
        self.max_tokens = max_tokens
        self.calls: list[tuple[str, list[int], list[int], list[float]]] = []
        self.fail: set[str] = set()
        """Request ids whose calls fail as a lost server would (the test's infrastructure failure)."""

    async def generate(
        self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any], **_: Any
    ) -> Any:
        from verl.workers.rollout.replica import TokenOutput

        if request_id in self.fail or "fail" in self.fail:
            self.fail.discard("fail")
            self.fail.add(request_id)
            raise ConnectionError("The rollout server went away.")
        params = {"temperature": float(sampling_params["temperature"]), "top_p": float(sampling_params["top_p"])}
        params["max_tokens"] = min(int(sampling_params["max_tokens"]), self.max_tokens)
        call = await self.provider.complete_text(TextRequest(model=MODEL, prompt=tuple(prompt_ids), params=params))
        ids, logprobs = list(call.completion_token_ids or ()), list(call.logprobs or ())
        self.calls.append((request_id, list(prompt_ids), ids, logprobs))
        return TokenOutput(token_ids=ids, log_probs=logprobs, stop_reason="completed")


def verl_config(model_folder: Path) -> Any:
    """verl's own trainer config (``ppo_trainer.yaml``), for the embedded model, with the nenyax agent loop."""
    import verl.trainer
    from hydra import compose, initialize_config_dir

    folder = Path(verl.trainer.__file__).parent / "config"
    with initialize_config_dir(config_dir=str(folder), version_base=None):
        return compose(
            config_name="ppo_trainer",
            overrides=[
                f"actor_rollout_ref.model.path={model_folder}",
                "actor_rollout_ref.rollout.name=vllm",
                "actor_rollout_ref.rollout.prompt_length=512",
                f"actor_rollout_ref.rollout.response_length={RESPONSE_LENGTH}",
                "actor_rollout_ref.rollout.temperature=1.0",
                "actor_rollout_ref.rollout.calculate_log_probs=true",
                f"actor_rollout_ref.rollout.agent.agent_loop_config_path={AGENT_LOOP_CONFIG}",
                "data.max_prompt_length=512",
                "data.filter_overlong_prompts=false",
                f"data.max_response_length={RESPONSE_LENGTH}",
            ],
        )


def batch_of(uri: str, config: Any, tokenizer: Any, tmp_path: Path, *, repeat: int, limit: int | None = None) -> Any:
    """verl's generation batch of `uri`'s tasks as the trainer makes it: `verl_rows` written to parquet, read by
    verl's ``RLHFDataset``, collated, given a uid per prompt, and each prompt repeated `repeat` times."""
    import uuid

    import numpy as np
    from verl.protocol import DataProto
    from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn

    path = tmp_path / "train.parquet"
    pd.DataFrame(verl_rows(uri, limit=limit)).to_parquet(path)
    dataset = RLHFDataset(data_files=[str(path)], tokenizer=tokenizer, config=config.data)
    batch = DataProto.from_single_dict(collate_fn([dataset[i] for i in range(len(dataset))]))
    batch.non_tensor_batch["uid"] = np.array([str(uuid.uuid4()) for _ in range(len(batch))], dtype=object)
    return batch.repeat(repeat_times=repeat, interleave=True)


_LOOP = asyncio.new_event_loop()
"""The worker's one event loop, as a verl worker has (the model's engine and the environments are bound to it)."""


def generate(worker: Any, batch: Any) -> Any:
    """verl's worker generates the batch (its ``generate_sequences``, on the worker's event loop)."""
    return _LOOP.run_until_complete(worker.generate_sequences(batch))
