"""`TinkerLearner`: LoRA training of a hosted base model on the Tinker service, as a Nenyax learner.

One round, as `nenyax train` drives it: ``policy()`` samples from the current weights on the service;
``save(directory)`` saves the weights *and* the optimizer state on the service (``save_state``) and writes
the tinker path of that checkpoint into ``directory/tinker.json``; ``update(groups)`` turns the recorded
calls into Datums (`nenyax.learners.tinker.datums`) and runs one ``forward_backward`` with the chosen
loss and one ``optim_step``; ``restore(revision)`` reads ``tinker.json`` back and continues from that
checkpoint. The state lives on the service, so a fresh process restores it too (``train --resume``).

Restoring makes a new training client from the checkpoint with its optimizer state
(``ServiceClient.create_training_client_from_state_with_optimizer``): tinker 0.38 deprecates
``TrainingClient.load_state`` for exactly that, and a reverted round must not keep the Adam moments
of the update it reverts.

Every SDK call is made lazily and its future waited on here, outside any event loop: constructing the
learner checks its options and its API key and makes no network call at all.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from nenyax.core import Group
from nenyax.core.errors import InfraFailure, UsageError
from nenyax.core.toolkit.options import Option, Options
from nenyax.learners.tinker.datums import LOSSES, batch
from nenyax.learners.tinker.policy import TinkerPolicy

STATE_FILE = "tinker.json"
"""What `save` writes under its directory: the checkpoint's tinker path, the step, the base model."""

PROVIDER_PREFIX = "tinker:"
OPTIONS = Options(
    "tinker",
    Option("loss", str, choices=LOSSES, help="Tinker's RL loss."),
    Option("scale", str, choices=("group", "none"), help="Advantages over the group's std, or only centred."),
    Option("rank", int, positive=True, help="The LoRA rank."),
    Option("max_tokens", int, positive=True, help="Tokens a rollout may sample."),
    Option("lr", float, positive=True, help="Adam's learning rate."),
    Option("temperature", float, minimum=0, help="The rollouts' sampling temperature."),
    Option("weight_decay", float, minimum=0, help="AdamW's weight decay."),
    Option("grad_clip_norm", float, minimum=0, help="The gradient norm clipped to (0: none)."),
    kind="learner",
    error=UsageError,
)
"""The settings checked before anything else (the others are Tinker's own)."""


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


def _wait(future: Any, doing: str) -> Any:
    """The result of an SDK future; a service or network failure is an infrastructure failure."""
    try:
        return future.result()
    except Exception as exc:
        msg = f"The Tinker service failed to {doing} ({_first_line(exc)})."
        raise InfraFailure(msg) from exc


class TinkerLearner:
    """LoRA on a Tinker-hosted base model, trained with one of Tinker's RL losses."""

    def __init__(
        self,
        model: str | None = None,
        *,
        rank: int = 32,
        loss: str = "importance_sampling",
        loss_config: Mapping[str, float | str] | None = None,
        lr: float = 1e-4,
        beta1: float = 0.9,
        beta2: float = 0.95,
        eps: float = 1e-12,
        weight_decay: float = 0.0,
        grad_clip_norm: float = 0.0,
        scale: str = "group",
        temperature: float = 1.0,
        max_tokens: int = 512,
        top_p: float = 1.0,
        top_k: int = -1,
        seed: int | None = None,
        train_mlp: bool = True,
        train_attn: bool = True,
        train_unembed: bool = True,
        checkpoint_ttl_s: int | None = None,
        api_key_env: str = "TINKER_API_KEY",
        base_url: str | None = None,
    ) -> None:
        """`model`: the base model as Tinker names it (``Qwen/Qwen3-8B``; ``tinker:Qwen/Qwen3-8B`` too).

        ``loss``: ``importance_sampling`` (default), ``ppo``, ``cispo`` or ``gspo``, with ``loss_config``
        passed to ``forward_backward`` as it is (clip thresholds, say). ``lr`` and the other Adam settings
        go to every ``optim_step`` (Tinker's AdamW; weight decay 0 unless set). ``scale``: advantages over
        the group's std (``group``, GRPO's) or only centred (``none``, Dr. GRPO's). Rollouts sample at
        ``temperature`` with at most ``max_tokens``; held-out episodes are played greedily (`eval_policy`).
        The API key is read from the variable `api_key_env` now; nothing is sent until the first use.
        """
        if not isinstance(model, str) or not model.strip():
            msg = "The tinker learner needs the base model to train, as Tinker names it (e.g. --model Qwen/Qwen3-8B)."
            raise UsageError(msg)
        self.base_model = model.removeprefix(PROVIDER_PREFIX)
        OPTIONS.check(
            loss=loss,
            scale=scale,
            rank=rank,
            max_tokens=max_tokens,
            lr=lr,
            temperature=temperature,
            weight_decay=weight_decay,
            grad_clip_norm=grad_clip_norm,
        )
        key = os.environ.get(api_key_env)
        if not key:
            msg = (
                f"The tinker learner reads its API key from the environment variable {api_key_env}, "
                "which is not set; set it (or name another variable with api_key_env)."
            )
            raise UsageError(msg)
        import tinker

        self.loss, self.scale, self.rank = loss, scale, rank
        self.loss_config = dict(loss_config) if loss_config else None
        self.adam = tinker.AdamParams(
            learning_rate=lr,
            beta1=beta1,
            beta2=beta2,
            eps=eps,
            weight_decay=weight_decay,
            grad_clip_norm=grad_clip_norm,
        )
        self.train_mlp, self.train_attn, self.train_unembed = train_mlp, train_attn, train_unembed
        self.seed, self.checkpoint_ttl_s = seed, checkpoint_ttl_s
        self.sampling = {"temperature": temperature, "top_p": top_p, "top_k": top_k}
        if seed is not None:
            self.sampling["seed"] = seed
        self.max_tokens = max_tokens
        # Constructing a ServiceClient sends nothing (tinker opens its session on first use).
        self.service = tinker.ServiceClient(api_key=key, base_url=base_url)
        self.step = 0
        """Optimizer steps behind the current weights (restored with them)."""
        self._training: Any = None
        self._sampler: Any = None
        self._tokenizer: Any = None

    # ------------------------------------------------------------ the service's clients

    @property
    def training(self) -> Any:
        """The LoRA training client (created on the service on first use)."""
        if self._training is None:
            future = self.service.create_lora_training_client(
                base_model=self.base_model,
                rank=self.rank,
                seed=self.seed,
                train_mlp=self.train_mlp,
                train_attn=self.train_attn,
                train_unembed=self.train_unembed,
            )
            self._training = _wait(future, f"create a LoRA training client for {self.base_model!r}")
        return self._training

    @property
    def tokenizer(self) -> Any:
        """The base model's tokenizer, as tinker gives it."""
        if self._tokenizer is None:
            self._tokenizer = self.training.get_tokenizer()
        return self._tokenizer

    def _sampling_client(self) -> Any:
        # One snapshot of the weights per revision: made after an update or a restore, then reused.
        if self._sampler is None:
            self._sampler = _wait(
                self.training.save_weights_and_get_sampling_client(), "snapshot the weights for sampling"
            )
        return self._sampler

    @property
    def revision(self) -> str:
        """Names the current weights: ``step-<optimizer steps>``."""
        return f"step-{self.step}"

    # ------------------------------------------------------------ the learner kind

    def policy(self) -> TinkerPolicy:
        """The current weights, sampled on the service at the learner's temperature."""
        return self._policy(self.sampling)

    def eval_policy(self) -> TinkerPolicy:
        """The same weights, greedy: what held-out episodes are measured with."""
        return self._policy({**self.sampling, "temperature": 0.0})

    def _policy(self, sampling: Mapping[str, Any]) -> TinkerPolicy:
        return TinkerPolicy(
            sampler=self._sampling_client(),
            tokenizer=self.tokenizer,
            base_model=self.base_model,
            revision=self.revision,
            params=dict(sampling),
            defaults={"max_tokens": self.max_tokens},
        )

    def update(self, groups: Sequence[Group]) -> dict[str, float]:
        """One ``forward_backward`` with the learner's loss over every call with a signal, then one ``optim_step``.

        Metrics: ``loss`` (the service's ``loss:sum``), ``datums``, ``tokens`` (completion tokens trained),
        ``idle_calls`` (calls of groups whose members all scored alike, left out), ``step``. With no call
        carrying a signal nothing is sent and the weights stay as they are.
        """
        data = batch(groups, loss=self.loss, scale=self.scale)
        metrics = {
            "datums": float(len(data.data)),
            "tokens": float(data.completion_tokens),
            "idle_calls": float(data.calls_without_signal),
        }
        if not data.data:
            return {**metrics, "step": float(self.step)}
        training = self.training
        result = _wait(
            training.forward_backward(list(data.data), self.loss, self.loss_config),
            f"run forward_backward ({self.loss})",
        )
        optimized = _wait(training.optim_step(self.adam), "run optim_step")
        self.step += 1
        self._sampler = None  # the next policy samples the new weights
        for name, value in (result.metrics or {}).items():
            metrics[f"service/{name}"] = float(value)
        for name, value in (optimized.metrics or {}).items():
            metrics[f"optim/{name}"] = float(value)
        if "loss:sum" in (result.metrics or {}):
            metrics["loss"] = float(result.metrics["loss:sum"])
        return {**metrics, "step": float(self.step)}

    def save(self, directory: Path) -> str:
        """Save weights and optimizer state on the service; write their tinker path to ``directory/tinker.json``."""
        directory = Path(directory)
        # Checkpoint names are per training run on the service: the round's folder name, made unique so
        # that saving the same round again (a resumed run) never collides with the first save.
        stem = re.sub(r"[^A-Za-z0-9_-]+", "-", directory.name).strip("-") or "checkpoint"
        name = f"nenyax-{stem}-{uuid.uuid4().hex[:8]}"
        saved = _wait(self.training.save_state(name, ttl_seconds=self.checkpoint_ttl_s), "save the training state")
        state = {"path": saved.path, "step": self.step, "base_model": self.base_model, "rank": self.rank}
        (directory / STATE_FILE).write_text(json.dumps(state, indent=1) + "\n", encoding="utf-8")
        return str(directory)

    def restore(self, revision: str) -> None:
        """Continue from the checkpoint a `save` wrote under `revision` (in this process or another)."""
        path = Path(revision) / STATE_FILE
        try:
            state = json.loads(path.read_text(encoding="utf-8"))
            tinker_path, step, base_model = str(state["path"]), int(state["step"]), str(state["base_model"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            msg = f"Cannot restore the tinker learner from {path} ({_first_line(exc)})."
            raise UsageError(msg) from exc
        if base_model != self.base_model:
            msg = f"The checkpoint at {path} is of {base_model!r}, not of this learner's {self.base_model!r}."
            raise UsageError(msg)
        future = self.service.create_training_client_from_state_with_optimizer(tinker_path)
        self._training = _wait(future, f"load the checkpoint {tinker_path}")
        self.step, self._sampler = step, None

    def close(self) -> None:
        """End the service session (its checkpoints stay on the service)."""
        # Closing must not mask what ended the run: a session that cannot be finished expires on the service.
        with contextlib.suppress(Exception):
            self.service.close("success").result(timeout=30)
