"""`TorchLearner`: grpo, dapo, gspo, rloo, rft and dpo on a local open model, from recorded trajectories.

The learner trains its own copy of the model (float32 by default, on the device it picks) and serves the
current weights through the provider the model came from: each update writes a new Hugging Face folder and
`policy()` names it (``local:<folder>``), so every rollout samples the updated model with exact token ids
and raw logprobs. The losses (`nenyax.learners.torch.losses`) use those recorded ids and logprobs as the
behaviour policy: nothing is re-tokenised, nothing is re-sampled.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import torch
from nenyax.core import Endpoint, Group, Trajectory
from nenyax.core.errors import UsageError
from nenyax.core.toolkit.learning import group_advantages
from nenyax.core.toolkit.options import Option, Options
from nenyax.learners.torch import losses
from nenyax.learners.torch.batching import Batch, Sample, chunks, collate, samples_of
from nenyax.learners.torch.weights import (
    MODEL_DIR,
    OPTIMIZER_FILE,
    RNG_FILE,
    base_weights,
    drop,
    load_model,
    load_tokenizer,
    read_state,
    read_weights,
    rng_state,
    set_rng_state,
    write_model,
    write_state,
)

DEFAULT_MODEL = "local:smollm2-135m"
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
OPTIONS = Options(
    "torch",
    Option("lr", float, minimum=0, help="AdamW's learning rate."),
    Option("epsilon", float, minimum=0, maximum=1, help="The importance ratio's lower clip."),
    Option("epsilon_high", float, minimum=0, help="The importance ratio's upper clip (default: epsilon)."),
    Option("delta", float, minimum=1, help="An upper cap of the unclipped ratio (off by default)."),
    Option("beta", float, minimum=0, help="The KL weight (dpo: its temperature)."),
    Option("loss_type", str, choices=losses.AGGREGATIONS, help="How token losses are aggregated."),
    Option("importance_sampling_level", str, choices=("token", "sequence"), help="GSPO's level."),
    Option("scale_rewards", str, choices=("group", "none"), help="Advantages over the group's std, or centred."),
    Option("normalize_advantages", bool, help="rloo: standardise advantages over the batch."),
    Option("max_completion_length", int, minimum=1, help="dr_grpo's constant."),
    Option("max_grad_norm", float, minimum=0, help="The clip of the gradients' global norm (0: none)."),
    Option("weight_decay", float, minimum=0, help="AdamW's weight decay."),
    Option("epochs", int, minimum=1, help="Passes over an update's batch."),
    Option("micro_batch", int, minimum=1, help="Samples per forward pass."),
    Option("temperature", float, minimum=0, help="The policy's sampling temperature."),
    Option("max_tokens", int, minimum=1, help="Tokens the policy may sample."),
    Option("eval_temperature", float, minimum=0, help="eval_policy's temperature (0: greedy)."),
    Option("dtype", str, choices=tuple(DTYPES), help="The weights' dtype."),
    Option("seed", int, minimum=0, help="torch's and Python's RNG seed."),
    kind="learner",
    error=UsageError,
)
"""Every option but the model and the device, checked before anything loads."""
POLICY_GRADIENT = ("grpo", "dapo", "gspo")


def _score(trajectory: Trajectory) -> float:
    # Only trainable trajectories reach a learner; an unjudged one is a policy_error, the policy's fault.
    return trajectory.judgment.score if trajectory.judgment is not None else 0.0


def _device(name: str) -> torch.device:
    """``auto`` asks accelerate (CUDA, else MPS, else CPU); any other name is torch's."""
    if name == "auto":
        from accelerate import PartialState

        return torch.device(PartialState().device)
    if name not in ("cpu", "mps") and not (name == "cuda" or (name.startswith("cuda:") and name[5:].isdigit())):
        msg = f"The learner's device must be auto, cpu, cuda, cuda:N or mps, not {name!r}."
        raise UsageError(msg)
    if name.startswith("cuda") and not torch.cuda.is_available():
        msg = f"The learner's device is {name!r} but torch sees no CUDA device here; use device='auto' or 'cpu'."
        raise UsageError(msg)
    if name == "mps" and not torch.backends.mps.is_available():
        msg = "The learner's device is 'mps' but torch sees no MPS device here; use device='auto' or 'cpu'."
        raise UsageError(msg)
    return torch.device(name)


class TorchLearner:
    """One learner, several presets (`GRPO`, `DAPO`, `GSPO`, `RLOO`, `RFT`, `DPO`); an option left as None
    takes its preset's value (`PRESET`)."""

    name: ClassVar[str] = "grpo"
    PRESET: ClassVar[dict[str, Any]] = {}
    BASE: ClassVar[dict[str, Any]] = {
        "lr": 1e-5,
        "epsilon": 0.2,
        "epsilon_high": None,  # None: epsilon (symmetric clipping)
        "beta": 0.0,
        "loss_type": "grpo",
        "importance_sampling_level": "token",
        "scale_rewards": "group",
    }

    def __init__(
        self,
        model: str | None = None,
        *,
        lr: float | None = None,
        epsilon: float | None = None,
        epsilon_high: float | None = None,
        delta: float | None = None,
        beta: float | None = None,
        loss_type: str | None = None,
        importance_sampling_level: str | None = None,
        scale_rewards: str | None = None,
        normalize_advantages: bool = False,
        max_completion_length: int | None = None,
        max_grad_norm: float = 1.0,
        weight_decay: float = 0.0,
        epochs: int = 1,
        micro_batch: int = 8,
        temperature: float = 1.0,
        max_tokens: int | None = None,
        eval_temperature: float = 0.0,
        device: str = "auto",
        dtype: str = "float32",
        seed: int = 0,
    ) -> None:
        """Load `model` (``provider:model``; default ``local:smollm2-135m``) to train; every option is checked
        here and a bad one is refused in one sentence (`UsageError`).

        - ``lr`` (AdamW), ``weight_decay``, ``max_grad_norm`` (clip of the gradients' global norm; 0: none).
        - ``epsilon`` / ``epsilon_high``: the clip range of the importance ratio, ``[1 - epsilon, 1 + epsilon_high]``;
          ``delta``: an upper cap of the unclipped ratio (two-sided clipping, off by default).
        - ``beta``: grpo/dapo/gspo: the weight of the k3 KL to the initial model (a frozen copy is kept when > 0);
          dpo: DPO's temperature; rloo, rft: must be 0.
        - ``loss_type`` (grpo family): ``grpo``, ``dr_grpo``, ``dapo`` or ``bnpo`` aggregation;
          ``importance_sampling_level``: ``token`` or ``sequence`` (GSPO).
        - ``scale_rewards``: ``group`` (advantages over the group's std) or ``none`` (Dr. GRPO);
          ``normalize_advantages`` (rloo): standardise over the batch.
        - ``max_completion_length``: dr_grpo's constant (default: the update's longest completion).
        - ``epochs``: passes over an update's batch; ``micro_batch``: samples per forward pass.
        - ``temperature``, ``max_tokens``: the policy's sampling; ``eval_temperature``: `eval_policy`'s (0: greedy).
        - ``device``: ``auto`` (accelerate: CUDA, else MPS, else CPU), ``cpu``, ``cuda[:N]``, ``mps``;
          ``dtype``: ``float32``, ``bfloat16`` or ``float16``; ``seed``: torch's and Python's RNG.
        """
        settings = {**self.BASE, **self.PRESET}
        chosen = {
            "lr": lr,
            "epsilon": epsilon,
            "epsilon_high": epsilon_high,
            "beta": beta,
            "loss_type": loss_type,
            "importance_sampling_level": importance_sampling_level,
            "scale_rewards": scale_rewards,
        }
        settings.update({k: v for k, v in chosen.items() if v is not None})
        checked = OPTIONS.check(
            lr=settings["lr"],
            epsilon=settings["epsilon"],
            epsilon_high=settings["epsilon_high"],
            delta=delta,
            beta=settings["beta"],
            loss_type=settings["loss_type"],
            importance_sampling_level=settings["importance_sampling_level"],
            scale_rewards=settings["scale_rewards"],
            normalize_advantages=normalize_advantages,
            max_completion_length=max_completion_length,
            max_grad_norm=max_grad_norm,
            weight_decay=weight_decay,
            epochs=epochs,
            micro_batch=micro_batch,
            temperature=temperature,
            max_tokens=max_tokens,
            eval_temperature=eval_temperature,
            dtype=dtype,
            seed=seed,
        )
        self.lr, self.epsilon, self.delta, self.beta = (
            checked["lr"],
            checked["epsilon"],
            checked["delta"],
            checked["beta"],
        )
        self.epsilon_high = self.epsilon if checked["epsilon_high"] is None else checked["epsilon_high"]
        self.loss_type = checked["loss_type"]
        self.level = checked["importance_sampling_level"]
        self.scale_rewards = checked["scale_rewards"]
        self.normalize_advantages = checked["normalize_advantages"]
        self.max_completion_length = checked["max_completion_length"]
        self.max_grad_norm, self.weight_decay = checked["max_grad_norm"], checked["weight_decay"]
        self.epochs, self.micro_batch = checked["epochs"], checked["micro_batch"]
        self.temperature, self.max_tokens = checked["temperature"], checked["max_tokens"]
        self.eval_temperature = checked["eval_temperature"]
        self.seed = checked["seed"]
        self.device_name = device if isinstance(device, str) else repr(device)
        self.device = _device(self.device_name)
        self.dtype = dtype

        self.model_name = model or DEFAULT_MODEL
        self.provider_name, self.base_folder = base_weights(self.model_name)
        torch.manual_seed(self.seed)
        self.tokenizer = load_tokenizer(self.base_folder)
        pad = self.tokenizer.pad_token_id
        self.pad_id = int(pad if pad is not None else (self.tokenizer.eos_token_id or 0))
        self.model = load_model(self.base_folder, self.device, DTYPES[dtype])
        self.model.train()
        # A frozen copy of the starting weights, only where a loss compares with it.
        self.reference = None
        if self.beta > 0 and self.name == "rloo":
            msg = "The rloo learner takes no KL penalty (beta must be 0); use grpo, dapo or gspo with beta for one."
            raise UsageError(msg)
        if self.beta > 0 and self.name in POLICY_GRADIENT:
            self.reference = load_model(self.base_folder, self.device, DTYPES[dtype]).eval()
            self.reference.requires_grad_(False)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=self.lr, weight_decay=self.weight_decay)
        self.step = 0
        self._work = Path(tempfile.mkdtemp(prefix=f"nenyax-{self.name}-"))
        self._served: Path = self.base_folder
        self._owned: Path | None = None  # the served folder this learner wrote (deleted when replaced)
        self._serial = 0
        self._revision = f"{self.name}:base"
        self._policies: dict[float, Endpoint] = {}

    # ------------------------------------------------------------ policies

    def _endpoint(self, temperature: float) -> Endpoint:
        endpoint = self._policies.get(temperature)
        if endpoint is None:
            sampling: dict[str, Any] = {"temperature": temperature}
            if self.max_tokens is not None:
                sampling["max_tokens"] = self.max_tokens
            endpoint = Endpoint(
                f"{self.provider_name}:{self._served}",
                revision=self._revision,
                provider_options={"device": self.device_name} if self.provider_name == "local" else None,
                **sampling,
            )
            self._policies[temperature] = endpoint
        return endpoint

    def policy(self) -> Endpoint:
        """The current weights, served by their provider, sampling at ``temperature``."""
        return self._endpoint(self.temperature)

    def eval_policy(self) -> Endpoint:
        """The current weights at ``eval_temperature`` (greedy by default): what held-out tasks are measured with."""
        return self._endpoint(self.eval_temperature)

    def _serve_current(self) -> None:
        """Write the current weights to a new folder and serve it: the provider keys loaded models by folder,
        so a new folder is what makes the next rollout sample the new weights."""
        self._serial += 1
        folder = self._work / f"step-{self.step:05d}-{self._serial:04d}"
        write_model(self.model, self.tokenizer, folder)
        self._switch(folder, owned=True)

    def _switch(self, folder: Path, *, owned: bool) -> None:
        previous = self._owned
        self._served, self._owned = folder, (folder if owned else None)
        self._revision = f"{self.name}:{folder.name}"
        self._policies.clear()
        if previous is not None and previous != folder:
            drop(previous)

    # ------------------------------------------------------------ samples

    def _policy_gradient_samples(self, groups: Sequence[Group]) -> list[Sample]:
        samples: list[Sample] = []
        for group in groups:
            if self.name == "rloo":
                scores = torch.tensor([_score(t) for t in group.trajectories])
                advantages = losses.rloo_advantages(scores, len(scores)).tolist()
            else:
                advantages = group_advantages(group, scale=self.scale_rewards)
            for trajectory, advantage in zip(group.trajectories, advantages, strict=True):
                samples += samples_of(trajectory, float(advantage))
        if self.name == "rloo" and self.normalize_advantages and len(samples) > 1:
            values = torch.tensor([s.weight for s in samples])
            normed = ((values - values.mean()) / (values.std() + 1e-4)).tolist()
            samples = [
                Sample(s.prompt_ids, s.completion_ids, s.old_logprobs, w, s.owner)
                for s, w in zip(samples, normed, strict=True)
            ]
        return samples

    def _best_samples(self, groups: Sequence[Group]) -> list[Sample]:
        """RFT's targets: each group's best member, when it scored above the group's worst."""
        samples: list[Sample] = []
        for group in groups:
            scores = [_score(t) for t in group.trajectories]
            best = max(range(len(scores)), key=lambda i: scores[i])
            if scores[best] > min(scores) or (len(scores) == 1 and scores[best] > 0):
                samples += samples_of(group.trajectories[best], 1.0)
        return samples

    def _pairs(self, groups: Sequence[Group]) -> list[tuple[list[Sample], list[Sample]]]:
        """DPO's pairs: each group's best member (chosen) against its worst (rejected), when they differ."""
        pairs = []
        for group in groups:
            scores = [_score(t) for t in group.trajectories]
            best = max(range(len(scores)), key=lambda i: scores[i])
            worst = min(range(len(scores)), key=lambda i: scores[i])
            if scores[best] > scores[worst]:
                chosen = samples_of(group.trajectories[best], 1.0, owner=0)
                rejected = samples_of(group.trajectories[worst], 1.0, owner=1)
                if chosen and rejected:
                    pairs.append((chosen, rejected))
        return pairs

    # ------------------------------------------------------------ forward

    def _logprobs(self, model: Any, batch: Batch) -> torch.Tensor:
        """The raw per-token logprobs (B, C) of the batch's completions under `model`."""
        width = batch.completion_length
        out = model(
            input_ids=batch.input_ids,
            attention_mask=batch.attention_mask,
            position_ids=batch.position_ids,
            logits_to_keep=width + 1,
            use_cache=False,
        )
        return losses.token_logprobs(out.logits[:, :-1], batch.completion_ids)

    def _reference_logprobs(self, batch: Batch) -> torch.Tensor:
        assert self.reference is not None
        with torch.no_grad():
            return self._logprobs(self.reference, batch)

    def _policy_gradient_step(self, samples: list[Sample]) -> float:
        """Backward of one pass over `samples`; returns the loss of the whole batch.

        Samples whose advantage is 0 carry no gradient (without a KL term), so they are counted in the
        normalisers (which then equal TRL's over the whole batch) but not forwarded.
        """
        total_sequences = len(samples)
        total_tokens = sum(len(s.completion_ids) for s in samples)
        longest = self.max_completion_length or max(len(s.completion_ids) for s in samples)
        active = [s for s in samples if s.weight != 0.0] if self.beta == 0.0 else samples
        loss_sum = 0.0
        for part in chunks(active, self.micro_batch):
            batch = collate(part, pad_id=self.pad_id, device=self.device)
            logprobs = self._logprobs(self.model, batch)
            share = len(part) / total_sequences
            if self.name == "rloo":
                loss = share * losses.rloo_loss(
                    logprobs,
                    batch.old_logprobs,
                    batch.weights,
                    batch.completion_mask,
                    epsilon_low=self.epsilon,
                    epsilon_high=self.epsilon_high,
                )
            else:
                loss = losses.policy_gradient_loss(
                    logprobs,
                    batch.old_logprobs,
                    batch.weights,
                    batch.completion_mask,
                    aggregation="dapo" if self.loss_type in ("dapo", "bnpo") else self.loss_type,
                    level=self.level,
                    epsilon_low=self.epsilon,
                    epsilon_high=self.epsilon_high,
                    delta=self.delta,
                    beta=self.beta,
                    ref_logprobs=self._reference_logprobs(batch) if self.reference is not None else None,
                    max_completion_length=longest,
                    # dapo and bnpo divide by the update's tokens (one process: its local batch is the global one)
                    num_items=total_tokens,
                )
                if self.loss_type in ("grpo", "dr_grpo"):
                    loss = share * loss
            loss.backward()
            loss_sum += float(loss.detach())
        return loss_sum

    def _rft_step(self, samples: list[Sample]) -> float:
        total_tokens = sum(len(s.completion_ids) for s in samples)
        loss_sum = 0.0
        for part in chunks(samples, self.micro_batch):
            batch = collate(part, pad_id=self.pad_id, device=self.device)
            logprobs = self._logprobs(self.model, batch)
            loss = losses.nll_loss(logprobs, batch.completion_mask) * (batch.completion_mask.sum() / total_tokens)
            loss.backward()
            loss_sum += float(loss.detach())
        return loss_sum

    def _dpo_step(self, pairs: list[tuple[list[Sample], list[Sample]]]) -> float:
        """DPO on summed sequence logprobs; the reference is the sampler's own recorded logprobs (the policy
        that played the group), so no second model is held."""
        per_part = max(1, self.micro_batch // 2)
        loss_sum = 0.0
        for start in range(0, len(pairs), per_part):
            part = pairs[start : start + per_part]
            samples = [
                Sample(s.prompt_ids, s.completion_ids, s.old_logprobs, s.weight, owner=2 * i + s.owner)
                for i, (chosen, rejected) in enumerate(part)
                for s in (*chosen, *rejected)
            ]
            batch = collate(samples, pad_id=self.pad_id, device=self.device)
            logprobs = self._logprobs(self.model, batch)
            per_sequence = losses.sequence_logprobs(logprobs, batch.completion_mask)
            reference = losses.sequence_logprobs(batch.old_logprobs, batch.completion_mask)
            owners = 2 * len(part)
            summed = torch.zeros(owners, device=self.device).index_add(0, batch.owners, per_sequence)
            ref_summed = torch.zeros(owners, device=self.device).index_add(0, batch.owners, reference)
            loss = losses.dpo_sigmoid_loss(
                summed[0::2], summed[1::2], ref_summed[0::2], ref_summed[1::2], beta=self.beta
            ) * (len(part) / len(pairs))
            loss.backward()
            loss_sum += float(loss.detach())
        return loss_sum

    # ------------------------------------------------------------ the kind

    def update(self, groups: Sequence[Group]) -> Mapping[str, float]:
        """One optimiser step per epoch on `groups`; then the new weights are served.

        Returns ``loss``, ``tokens`` (completion tokens of the batch), ``samples``, ``grad_norm``, ``seconds``
        (serving the new weights included), ``train_seconds`` (forward, backward, step) and ``tokens_per_s``;
        ``skipped`` = 1 when nothing in the groups carries a signal (every member scored alike), and then the
        weights are left exactly as they were (no step: Adam's moments would still move them).
        """
        started = time.perf_counter()
        pairs: list[tuple[list[Sample], list[Sample]]] = []
        if self.name == "dpo":
            pairs = self._pairs(groups)
            samples = [s for chosen, rejected in pairs for s in (*chosen, *rejected)]
        elif self.name == "rft":
            samples = self._best_samples(groups)
        else:
            samples = self._policy_gradient_samples(groups)
        signal = [s for s in samples if s.weight != 0.0] if self.name not in ("dpo", "rft") else samples
        if not signal and not (self.reference is not None and samples):
            return {
                "loss": 0.0,
                "tokens": 0.0,
                "samples": float(len(samples)),
                "skipped": 1.0,
                "seconds": time.perf_counter() - started,
            }
        tokens = sum(len(s.completion_ids) for s in samples)
        loss = grad_norm = 0.0
        for _ in range(self.epochs):
            self.optimizer.zero_grad(set_to_none=True)
            if self.name == "dpo":
                loss = self._dpo_step(pairs)
            elif self.name == "rft":
                loss = self._rft_step(samples)
            else:
                loss = self._policy_gradient_step(samples)
            norm = torch.nn.utils.clip_grad_norm_(
                self.model.parameters(), self.max_grad_norm if self.max_grad_norm > 0 else float("inf")
            )
            grad_norm = float(norm)
            self.optimizer.step()
            self.step += 1
        self.optimizer.zero_grad(set_to_none=True)
        trained = time.perf_counter() - started
        self._serve_current()
        seconds = time.perf_counter() - started
        return {
            "loss": loss,
            "tokens": float(tokens),
            "samples": float(len(samples)),
            "grad_norm": grad_norm,
            "seconds": seconds,
            "train_seconds": trained,
            "tokens_per_s": tokens * self.epochs / seconds if seconds > 0 else 0.0,
            "skipped": 0.0,
        }

    def _options(self) -> dict[str, Any]:
        return {"learner": self.name, "model": self.model_name, "dtype": self.dtype}

    def save(self, directory: Path) -> str:
        """Weights (safetensors, a servable folder), optimizer state, step and RNG under `directory`; the
        revision is the directory's path, which `restore` accepts in any process."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        write_model(self.model, self.tokenizer, directory / MODEL_DIR)
        torch.save(self.optimizer.state_dict(), directory / OPTIMIZER_FILE)
        torch.save(rng_state(), directory / RNG_FILE)
        write_state(directory, {**self._options(), "step": self.step})
        return str(directory.resolve())

    def restore(self, revision: str) -> None:
        """Back to the state `save` wrote at `revision` (this process or another); served again at once."""
        directory, state = read_state(revision)
        mine = self._options()
        differs = [k for k in ("learner", "model") if state.get(k) != mine[k]]
        if differs:
            msg = (
                f"The checkpoint {revision!r} was saved by learner {state.get('learner')!r} on {state.get('model')!r}, "
                f"not {mine['learner']!r} on {mine['model']!r}."
            )
            raise UsageError(msg)
        with torch.no_grad():
            read_weights(self.model, directory / MODEL_DIR)
        self.optimizer.load_state_dict(torch.load(directory / OPTIMIZER_FILE, map_location=self.device))
        set_rng_state(torch.load(directory / RNG_FILE, weights_only=False))
        self.step = int(state["step"])
        self.model.train()
        self._serve_current()

    def close(self) -> None:
        """Free the models and delete the served folders this learner wrote."""
        self._policies.clear()
        self.model = self.reference = None
        drop(self._work)


class GRPO(TorchLearner):
    """GRPO (DeepSeekMath): group-normalised advantages, symmetric clip, per-sequence mean."""

    name = "grpo"
    PRESET: ClassVar[dict[str, Any]] = {"loss_type": "grpo"}


class DAPO(TorchLearner):
    """DAPO: clip-higher (epsilon 0.2, epsilon_high 0.28) and a token mean over the whole batch."""

    name = "dapo"
    PRESET: ClassVar[dict[str, Any]] = {"loss_type": "dapo", "epsilon_high": 0.28}


class GSPO(TorchLearner):
    """GSPO: sequence-level importance ratios with the paper's narrow clip (3e-4, 4e-4)."""

    name = "gspo"
    PRESET: ClassVar[dict[str, Any]] = {
        "loss_type": "grpo",
        "importance_sampling_level": "sequence",
        "epsilon": 3e-4,
        "epsilon_high": 4e-4,
    }


class RLOO(TorchLearner):
    """RLOO: leave-one-out baselines, clipped whole-sequence ratios, mean over sequences."""

    name = "rloo"


class RFT(TorchLearner):
    """Rejection-sampling fine-tuning: the NLL of each group's best member."""

    name = "rft"


class DPO(TorchLearner):
    """DPO (sigmoid): each group's best member against its worst; beta is DPO's temperature."""

    name = "dpo"
    PRESET: ClassVar[dict[str, Any]] = {"beta": 0.1}
