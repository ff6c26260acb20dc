"""Dequantizing a GGUF checkpoint once into a float32 Hugging Face folder (slow; cached by the caller)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

from nenyax.providers.local.cache import weights_digest

MANIFEST = "nenyax-model.json"
"""Written into each converted folder: where it came from and the hash of its weights."""


@contextlib.contextmanager
def quiet_transformers() -> Iterator[None]:
    """Silence transformers' progress bars for the duration (they would flood a rollout's output)."""
    from transformers.utils import logging

    was_enabled = logging.is_progress_bar_enabled()
    logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            logging.enable_progress_bar()


@contextlib.contextmanager
def _quiet_gguf_reader() -> Iterator[None]:
    # transformers wraps GGUF dequantization in a bare tqdm that ignores its own progress-bar
    # switch; a first rollout should not print 272 progress lines, so swap it for a pass-through.
    try:
        from transformers import modeling_gguf_pytorch_utils as gguf_utils
    except ImportError:
        yield
        return
    original = getattr(gguf_utils, "tqdm", None)
    gguf_utils.tqdm = lambda iterable, *args, **kwargs: iterable
    try:
        yield
    finally:
        gguf_utils.tqdm = original


def convert_gguf(gguf: Path, out: Path, gguf_sha256: str) -> None:
    """Load `gguf` through transformers (dequantizing to float32) and save it as a normal folder at `out`."""
    import torch
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer

    with quiet_transformers(), _quiet_gguf_reader():
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(
            gguf.parent, gguf_file=gguf.name, dtype=torch.float32, local_files_only=True
        )
        # The weights are already dequantized; transformers refuses to save a model that still
        # claims to be GGUF-quantized, so drop the claim (the saved weights are bit-identical).
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(out)
        tokenizer.save_pretrained(out)
    manifest = {
        "source": gguf.name,
        "source_sha256": gguf_sha256,
        "weights": weights_digest(out),
        "transformers": transformers.__version__,
        "torch": torch.__version__,
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")


def read_manifest(folder: Path) -> dict[str, str] | None:
    """The manifest of a folder this module converted, or None for any other folder."""
    try:
        data = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
