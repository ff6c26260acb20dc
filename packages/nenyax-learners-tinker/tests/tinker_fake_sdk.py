"""A fake of the tinker SDK's client surface (tinker 0.38.0), for tests only: no Tinker service is reachable here.

What is real and what is not:

- The clients are fakes with the real ones' method names and signatures (`test_fake_sdk.py` compares them with
  the installed SDK's), returning the SDK's own future type (`AwaitableConcurrentFuture`, awaitable and with
  ``.result()``) and its own result types (`ForwardBackwardOutput`, `OptimStepResponse`, `SaveWeightsResponse`,
  `LoadWeightsResponse`, `SampleResponse` of `SampledSequence`).
- Every Datum is checked as the service would have to take it: a real `tinker.Datum`, the loss a real
  `LossFnType` name, the RL loss's inputs present, each as long as the model input and of the wire dtype.
  A wrongly built Datum fails here.
- The "weights" are a digest: each ``optim_step`` folds the data of the gradient it applies (and the Adam
  settings) into it, so different training histories give different weights and a restored checkpoint has
  exactly the weights it was saved with. The loss is computed as if the learner's logprobs equalled the
  sampler's (ratio 1), which is the on-policy value of every RL loss here: the fake has no model to train.
- Checkpoints are JSON files in the folder ``FAKE_TINKER_STORE`` names (the "service side"), so one saved
  in a process can be loaded in another, as on the service.
- Sampling runs the embedded model (SmolLM2-135M-Instruct, nenyax-providers-local's engine) on the prompt's
  token ids: real tokens and logprobs, whatever the digest says (the fake cannot change the model's weights).
"""

from __future__ import annotations

import concurrent.futures
import functools
import hashlib
import json
import os
import typing
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import tinker
from tinker.lib.public_interfaces.api_future import AwaitableConcurrentFuture

BASE_MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"
"""The base model the tests name: the embedded model is what the fake samples with."""

RL_INPUTS = {"target_tokens": "int64", "logprobs": "float32", "advantages": "float32"}
LOSS_NAMES = typing.get_args(tinker.types.LossFnType)


def done(value: Any) -> AwaitableConcurrentFuture[Any]:
    """A finished SDK future holding `value` (an exception is raised by ``.result()`` / ``await``)."""
    future: concurrent.futures.Future[Any] = concurrent.futures.Future()
    if isinstance(value, BaseException):
        future.set_exception(value)
    else:
        future.set_result(value)
    return AwaitableConcurrentFuture(future)


def _store() -> Path:
    folder = Path(os.environ["FAKE_TINKER_STORE"])
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _checkpoint_file(path: str) -> Path:
    return _store() / (hashlib.sha256(path.encode()).hexdigest()[:24] + ".json")


def _engine() -> Any:
    from nenyax.providers.local.engine import shared_engine
    from nenyax.providers.local.models import resolve_model

    engine = shared_engine(
        resolve_model("smollm2-135m"), device="cpu", dtype="float32", max_batch=16, batch_window_s=0.01
    )
    engine.load()
    return engine


@functools.cache
def embedded_tokenizer() -> Any:
    """The embedded model's tokenizer: what ``get_tokenizer()`` gives for `BASE_MODEL` here (loaded alone,
    without the model's weights, from the folder the local provider converted its GGUF into)."""
    from transformers import AutoTokenizer

    from nenyax.providers.local.models import materialize, resolve_model

    folder, _ = materialize(resolve_model("smollm2-135m"))
    return AutoTokenizer.from_pretrained(folder, local_files_only=True)


class FakeServiceClient:
    """`tinker.ServiceClient`'s surface; `made` lists every instance (what the learner built)."""

    made: typing.ClassVar[list[FakeServiceClient]] = []
    fail_next: typing.ClassVar[dict[str, BaseException]] = {}
    """Method name -> the exception its next call's future raises (a service failure)."""

    def __init__(
        self,
        user_metadata: dict[str, str] | None = None,
        project_id: str | None = None,
        *,
        display_name: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        default_headers_overrides: typing.Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> None:
        self.api_key, self.base_url = api_key, base_url
        self.training_clients: list[FakeTrainingClient] = []
        self.closed: str | None = None
        FakeServiceClient.made.append(self)

    def create_lora_training_client(
        self,
        base_model: str,
        rank: int = 32,
        seed: int | None = None,
        train_mlp: bool = True,
        train_attn: bool = True,
        train_unembed: bool = True,
        user_metadata: dict[str, str] | None = None,
        optimizer: Any = None,
    ) -> AwaitableConcurrentFuture[FakeTrainingClient]:
        lora = {
            "rank": rank,
            "seed": seed,
            "train_mlp": train_mlp,
            "train_attn": train_attn,
            "train_unembed": train_unembed,
        }
        weights = hashlib.sha256(json.dumps([base_model, lora]).encode()).hexdigest()
        client = FakeTrainingClient(base_model=base_model, lora=lora, weights=weights, step=0)
        self.training_clients.append(client)
        return done(client)

    def create_training_client_from_state_with_optimizer(
        self,
        path: str,
        base_model: str | None = None,
        user_metadata: dict[str, str] | None = None,
        weights_access_token: str | None = None,
    ) -> AwaitableConcurrentFuture[FakeTrainingClient]:
        file = _checkpoint_file(path)
        if not file.is_file():
            return done(RuntimeError(f"no checkpoint {path}"))
        state = json.loads(file.read_text())
        client = FakeTrainingClient(
            base_model=state["base_model"], lora=state["lora"], weights=state["weights"], step=state["step"]
        )
        client.adam_state = state["adam_state"]
        client.loaded_from = path
        self.training_clients.append(client)
        return done(client)

    def close(
        self, status: typing.Literal["success", "errored", "interrupted"], detail: str | None = None
    ) -> AwaitableConcurrentFuture[None]:
        self.closed = status
        return done(None)


class FakeTrainingClient:
    """`tinker.TrainingClient`'s surface: checks Datums, keeps a weights digest, saves to the fake store."""

    def __init__(self, *, base_model: str, lora: dict[str, Any], weights: str, step: int) -> None:
        self.base_model, self.lora, self.weights, self.step = base_model, lora, weights, step
        self.run_id = uuid.uuid4().hex[:12]
        self.adam_state = hashlib.sha256(b"adam-init").hexdigest()
        self.loaded_from: str | None = None
        self.forward_backward_calls: list[tuple[list[Any], str, Any]] = []
        self.optim_calls: list[Any] = []
        self.saved: list[str] = []
        self._gradient: list[str] = []

    def forward_backward(
        self,
        data: list[Any],
        loss_fn: Any,
        loss_fn_config: typing.Mapping[str, float | str] | None = None,
    ) -> AwaitableConcurrentFuture[Any]:
        failure = FakeServiceClient.fail_next.pop("forward_backward", None)
        if failure is not None:
            return done(failure)
        if not data:
            return done(ValueError("No data provided"))
        if loss_fn not in LOSS_NAMES:
            return done(ValueError(f"unknown loss_fn {loss_fn!r}"))
        outputs, loss = [], 0.0
        for datum in data:
            check_rl_datum(datum)
            inputs = {k: v.to_numpy() for k, v in datum.loss_fn_inputs.items()}
            advantages, logprobs = inputs["advantages"], inputs["logprobs"]
            loss -= float((logprobs * advantages).sum() if loss_fn == "cispo" else advantages.sum())
            outputs.append({"logprobs": tinker.TensorData.from_numpy(logprobs.astype(np.float32))})
            self._gradient.append(_digest(datum))
        self.forward_backward_calls.append((list(data), loss_fn, loss_fn_config))
        return done(
            tinker.ForwardBackwardOutput(
                loss_fn_output_type="ArrayRecord", loss_fn_outputs=outputs, metrics={"loss:sum": loss}
            )
        )

    def optim_step(self, optim_params: Any = None, *, adam_params: Any = None) -> AwaitableConcurrentFuture[Any]:
        params = optim_params if optim_params is not None else adam_params
        if not isinstance(params, tinker.AdamParams):
            return done(TypeError(f"optim_step takes AdamParams, not {type(params).__name__}"))
        self.optim_calls.append(params)
        step_data = json.dumps([self.weights, self._gradient, params.model_dump()], sort_keys=True)
        self.weights = hashlib.sha256(step_data.encode()).hexdigest()
        self.adam_state = hashlib.sha256((self.adam_state + step_data).encode()).hexdigest()
        self.step += 1
        self._gradient = []
        return done(tinker.OptimStepResponse(metrics={"learning_rate": params.learning_rate}))

    def save_state(
        self,
        name: str,
        ttl_seconds: int | None = None,
        overwrite: bool = False,
        user_metadata: dict[str, str] | None = None,
    ) -> AwaitableConcurrentFuture[Any]:
        path = f"tinker://{self.run_id}/weights/{name}"
        file = _checkpoint_file(path)
        if file.exists() and not overwrite:
            return done(RuntimeError(f"checkpoint {name!r} exists"))
        state = {
            "base_model": self.base_model,
            "lora": self.lora,
            "weights": self.weights,
            "adam_state": self.adam_state,
            "step": self.step,
        }
        file.write_text(json.dumps(state))
        self.saved.append(path)
        return done(tinker.types.SaveWeightsResponse(path=path, type="save_weights"))

    def save_weights_and_get_sampling_client(
        self,
        name: str | None = None,
        retry_config: Any = None,
        record_stability_info: bool = False,
        kind: Any = "snapshot",
    ) -> AwaitableConcurrentFuture[FakeSamplingClient]:
        return done(FakeSamplingClient(base_model=self.base_model, weights=self.weights))

    def get_tokenizer(self) -> Any:
        return embedded_tokenizer()


class FakeSamplingClient:
    """`tinker.SamplingClient`'s surface, sampling with the embedded model; `requests` records each sample call."""

    fail: BaseException | None = None
    """Set on an instance: every sample's future raises it (the service failing)."""

    def __init__(self, *, base_model: str, weights: str) -> None:
        self.base_model, self.weights = base_model, weights
        self.requests: list[tuple[list[int], int, Any]] = []

    def sample(
        self,
        prompt: Any,
        num_samples: int,
        sampling_params: Any,
        include_prompt_logprobs: bool = False,
        topk_prompt_logprobs: int = 0,
        topk_sample_logprobs: int = 0,
        target_prompt_logprobs: Any = None,
        prompt_alt_tokens_k: int = 0,
        prompt_logprobs_last_n: int | None = None,
    ) -> AwaitableConcurrentFuture[Any]:
        from nenyax.providers.local.engine import Extras
        from nenyax.providers.local.sampling import Sampling

        if self.fail is not None:
            return done(self.fail)
        assert isinstance(prompt, tinker.ModelInput), type(prompt)
        assert isinstance(sampling_params, tinker.SamplingParams), type(sampling_params)
        ids = prompt.to_ints()
        self.requests.append((ids, num_samples, sampling_params))
        p = sampling_params
        stop = (p.stop,) if isinstance(p.stop, str) else tuple(p.stop or ())
        sampling = Sampling(
            temperature=p.temperature,
            top_p=p.top_p,
            top_k=max(p.top_k, 0),
            max_tokens=p.max_tokens or 64,
            seed=p.seed,
            stop=tuple(s for s in stop if isinstance(s, str)),
        )
        engine = _engine()
        futures = [engine.submit((), (), sampling, Extras(prompt_ids=tuple(ids))) for _ in range(num_samples)]
        result: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def finish(_: Any) -> None:
            if not all(f.done() for f in futures) or result.done():
                return
            try:
                sequences = [
                    tinker.types.SampledSequence(
                        stop_reason="stop" if c.finish_reason == "stop" else "length",
                        sequence_id=uuid.uuid4().hex,
                        tokens_np=np.asarray(c.completion_ids, dtype=np.int32),
                        logprobs_np=np.asarray(c.logprobs, dtype=np.float32),
                    )
                    for c in (f.result() for f in futures)
                ]
                result.set_result(tinker.types.SampleResponse(sequences=sequences))
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller
                result.set_exception(exc)

        for f in futures:
            f.add_done_callback(finish)
        return AwaitableConcurrentFuture(result)

    def get_tokenizer(self) -> Any:
        return embedded_tokenizer()


def check_rl_datum(datum: Any) -> None:
    """Raise AssertionError unless `datum` is a Datum the RL losses can take (see the module docstring)."""
    assert isinstance(datum, tinker.Datum), type(datum)
    assert isinstance(datum.model_input, tinker.ModelInput)
    n = datum.model_input.length
    for key, _dtype in RL_INPUTS.items():
        assert key in datum.loss_fn_inputs, f"missing {key}"
    for key, value in datum.loss_fn_inputs.items():
        assert isinstance(value, tinker.TensorData), (key, type(value))
        assert value.shape == [n], (key, value.shape, n)
        assert value.dtype == RL_INPUTS.get(key, "float32"), (key, value.dtype)


def _digest(datum: Any) -> str:
    parts = [datum.model_input.to_ints(), {k: v.to_numpy().tolist() for k, v in sorted(datum.loss_fn_inputs.items())}]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def install(monkeypatch: Any, store: Path) -> None:
    """Make ``tinker.ServiceClient`` the fake for a test (with its checkpoint store at `store`)."""
    FakeServiceClient.made.clear()
    FakeServiceClient.fail_next.clear()
    monkeypatch.setattr(tinker, "ServiceClient", FakeServiceClient)
    monkeypatch.setenv("FAKE_TINKER_STORE", str(store))
