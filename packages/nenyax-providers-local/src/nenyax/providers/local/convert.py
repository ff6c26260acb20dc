"""Dequantizing a GGUF checkpoint once into a float32 Hugging Face folder (slow; cached by the caller)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

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
        declared = gguf_tokens(gguf)
        save_portable_tokenizer(tokenizer, out, declared)
        check_tokenizer(tokenizer, out, declared)
    manifest = {
        "source": gguf.name,
        "source_sha256": gguf_sha256,
        "weights": weights_digest(out),
        "transformers": transformers.__version__,
        "torch": torch.__version__,
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")


GGUF_SPECIAL_IDS = {
    "bos_token": "tokenizer.ggml.bos_token_id",
    "eos_token": "tokenizer.ggml.eos_token_id",
    "unk_token": "tokenizer.ggml.unknown_token_id",
    "pad_token": "tokenizer.ggml.padding_token_id",
}
"""tokenizer_config.json's special-token keys, and the GGUF metadata keys that hold their ids."""


@attrs.frozen
class GGUFTokens:
    """What a GGUF file itself declares of its tokenizer's special tokens."""

    special_ids: dict[str, int]
    """tokenizer_config.json key -> token id."""
    adds_bos: bool
    """``tokenizer.ggml.add_bos_token``: whether encoding a text puts the BOS token first."""


def gguf_tokens(gguf: Path) -> GGUFTokens:
    """The special tokens `gguf` declares."""
    from gguf import GGUFReader

    fields = GGUFReader(gguf).fields

    def value(name: str) -> int | None:
        field = fields.get(name)
        return int(field.parts[field.data[0]][0]) if field is not None and field.data else None

    special = {key: value(name) for key, name in GGUF_SPECIAL_IDS.items()}
    return GGUFTokens({k: v for k, v in special.items() if v is not None}, bool(value("tokenizer.ggml.add_bos_token")))


def save_portable_tokenizer(tokenizer: Any, out: Path, declared: GGUFTokens) -> None:
    """Save `tokenizer` so that every transformers release reads it back alike: tokenizer.json as saved, under
    the plain tokenizers backend, with the special tokens the GGUF declares.

    transformers 5.5.4 names SmolLM2's byte-level BPE tokenizer after its architecture (CodeLlamaTokenizer,
    EOS ``<|im_start|>``, a BOS put before every text): read back from the folder, every space became
    ``<|endoftext|>``, and the model was silently prompted with garbage. 5.25 names no such class.
    """
    if not declared.adds_bos:
        from tokenizers import processors

        tokenizer.backend_tokenizer.post_processor = processors.TemplateProcessing(single="$A", pair="$A $B:1")
    tokenizer.save_pretrained(out)
    path = out / "tokenizer_config.json"
    saved = json.loads(path.read_text())
    config: dict[str, Any] = {"tokenizer_class": "PreTrainedTokenizerFast", "clean_up_tokenization_spaces": False}
    for key in ("model_max_length", "chat_template"):
        if key in saved:
            config[key] = saved[key]
    for key, token_id in declared.special_ids.items():
        config[key] = tokenizer.convert_ids_to_tokens(token_id)
    path.write_text(json.dumps(config, indent=2) + "\n")


PROBE = "Hello world, 12 + 7 = 19.\n  indented\t<|im_start|>user\nÉté? 日本"
"""Text a converted folder's tokenizer must read as the GGUF's: spaces, digits, newlines, a special token, non-ASCII."""


def check_tokenizer(tokenizer: Any, out: Path, declared: GGUFTokens) -> None:
    """Raise when the tokenizer saved at `out` reads or writes `PROBE` otherwise than `tokenizer` (the GGUF's)
    does, or puts a BOS first where the GGUF declares none (or none where it declares one)."""
    from transformers import AutoTokenizer

    reloaded = AutoTokenizer.from_pretrained(out, local_files_only=True)
    want = tokenizer.encode(PROBE, add_special_tokens=False)
    got = reloaded.encode(PROBE, add_special_tokens=False)
    if got != want or reloaded.decode(got) != tokenizer.decode(want):
        msg = f"the saved tokenizer reads text otherwise than the GGUF's ({got[:8]} against {want[:8]})"
        raise RuntimeError(msg)
    bos = declared.special_ids.get("bos_token")
    first = reloaded.encode(PROBE, add_special_tokens=True)[:1]
    if bos is not None and (first == [bos]) != declared.adds_bos:
        msg = f"the saved tokenizer {'omits' if declared.adds_bos else 'adds'} the BOS token the GGUF says it " + (
            "adds" if declared.adds_bos else "does not add"
        )
        raise RuntimeError(msg)


def read_manifest(folder: Path) -> dict[str, str] | None:
    """The manifest of a folder this module converted, or None for any other folder."""
    try:
        data = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
