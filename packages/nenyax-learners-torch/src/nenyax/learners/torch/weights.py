"""Where the learner's weights come from, where it serves them, and how a checkpoint is written and read."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import torch
from nenyax.core.errors import UsageError

MODEL_DIR = "model"
"""A checkpoint's Hugging Face folder (config, safetensors weights, tokenizer): servable as it is."""
STATE_FILE = "learner.json"
OPTIMIZER_FILE = "optimizer.pt"
RNG_FILE = "rng.pt"


def base_weights(model: str) -> tuple[str, Path]:
    """The provider name and the Hugging Face folder of ``provider:model``, asked of the provider itself
    (its optional ``weights(model)`` member), through the registry: no plugin imports another."""
    from nenyax.core import default_registry

    provider_name, sep, name = model.partition(":")
    if not sep or not provider_name or not name:
        msg = f"Name the learner's model as '<provider>:<model>' (e.g. 'local:smollm2-135m'), not {model!r}."
        raise UsageError(msg)
    registry = default_registry()
    # Asked of the factory first: a provider without weights (a hosted API) may not even start without a key.
    if not callable(getattr(registry.factory("provider", provider_name), "weights", None)):
        msg = (
            f"The provider {provider_name!r} cannot hand a model's weights to a learner; the torch learners "
            "train a local open model, such as 'local:smollm2-135m'."
        )
        raise UsageError(msg)
    provider = registry.create("provider", provider_name)
    return provider_name, Path(provider.weights(name))


def load_model(folder: Path, device: torch.device, dtype: torch.dtype) -> Any:
    """The causal LM in `folder`, on `device`."""
    from transformers import AutoModelForCausalLM
    from transformers.utils import logging

    logging.disable_progress_bar()  # "Loading weights" would land in the middle of `nenyax train`'s output
    model: Any = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype, local_files_only=True)
    return model.to(device)


def load_tokenizer(folder: Path) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(folder, local_files_only=True)


def write_model(model: Any, tokenizer: Any, folder: Path) -> None:
    """`model` and `tokenizer` as a Hugging Face folder that the local provider can serve."""
    from transformers.utils import logging

    folder.mkdir(parents=True, exist_ok=True)
    logging.disable_progress_bar()  # a bar per update ("Writing model shards") would garble a run's progress display
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def read_weights(model: Any, folder: Path) -> None:
    """Load the weights saved in `folder` into `model` in place (tied weights are saved once)."""
    from safetensors.torch import load_file

    state: dict[str, torch.Tensor] = {}
    for file in sorted(folder.glob("*.safetensors")):
        state.update(load_file(str(file)))
    missing, unexpected = model.load_state_dict(state, strict=False)
    tied = set(getattr(model, "_tied_weights_keys", None) or ())
    if isinstance(getattr(model, "_tied_weights_keys", None), dict):
        tied = set(model._tied_weights_keys)
    really_missing = [k for k in missing if k not in tied]
    if really_missing or unexpected:
        msg = (
            f"The checkpoint at {folder} does not hold this model's weights "
            f"(missing {really_missing[:3]}, unexpected {unexpected[:3]})."
        )
        raise UsageError(msg)
    if hasattr(model, "tie_weights"):
        model.tie_weights()


def rng_state() -> dict[str, Any]:
    state: dict[str, Any] = {"python": random.getstate(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def write_state(directory: Path, state: dict[str, Any]) -> None:
    (directory / STATE_FILE).write_text(json.dumps(state, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def read_state(revision: str) -> tuple[Path, dict[str, Any]]:
    """The checkpoint directory a revision names and its learner state; `UsageError` if it is not one."""
    directory = Path(revision)
    file = directory / STATE_FILE
    if not file.is_file() or not (directory / MODEL_DIR / "config.json").is_file():
        msg = f"{revision!r} is not a torch learner checkpoint (no {STATE_FILE} and {MODEL_DIR}/ there)."
        raise UsageError(msg)
    return directory, json.loads(file.read_text(encoding="utf-8"))


def drop(folder: Path | None) -> None:
    """Delete a served folder nobody needs any more (an engine that loaded it keeps its weights in memory)."""
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
