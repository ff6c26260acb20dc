"""A lean forward pass for Llama-architecture models (SmolLM2's), over packed weights and a preallocated KV cache.

Hugging Face's modules cost about 11 ms of Python and small ops per token on SmolLM2-135M (two
CPU cores), as much as reading its float32 weights; this pass does the same arithmetic with fewer
ops: q/k/v and gate/up fused into one matmul each, rotary embedding as one complex multiply
(q and k rows are permuted once at load so rotated pairs sit side by side; q.k is unchanged by
permuting both alike), and keys/values written into a cache sized for the whole batch at its start.
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np
import torch
import torch.nn.functional as F

from nenyax.providers.local.packed import PackedLinear

HEAD_FORMAT = {"int4": "int8"}
"""The output projection's format per body format: SmolLM2's GGUF keeps it (the tied embedding) in Q8_0,
which 4 bits would lose (logits off by up to 1.9); int8 groups re-pack it exactly, and read a quarter
of float32's bytes (the head alone is a fifth of the model)."""


def unsupported(config: Any) -> str | None:
    """Why this pass cannot run the model `config` describes, or None when it can."""
    if getattr(config, "model_type", None) != "llama":
        kind = getattr(config, "model_type", "unknown")
        return f"it is a {kind!r} model, and the packed formats run Llama-architecture models"
    if getattr(config, "attention_bias", False) or getattr(config, "mlp_bias", False):
        return "its attention or MLP has biases"
    if getattr(config, "hidden_act", "silu") != "silu":
        return f"its activation is {config.hidden_act!r}, not silu"
    rope = _rope_parameters(config)
    if rope.get("rope_type", "default") != "default":
        return f"it uses {rope['rope_type']!r} rotary scaling"
    return None


def _rope_parameters(config: Any) -> dict[str, Any]:
    # transformers 5 keeps rope_theta in rope_parameters; 4.x had it (and rope_scaling) on the config.
    found = getattr(config, "rope_parameters", None) or getattr(config, "rope_scaling", None) or {}
    return {"rope_theta": getattr(config, "rope_theta", 10000.0), **found}


def _interleave(weight: torch.Tensor, heads: int, head_dim: int) -> torch.Tensor:
    """Rows of a q or k projection reordered per head from [x1 | x2] halves to (x1_i, x2_i) pairs."""
    order = torch.arange(head_dim).view(2, head_dim // 2).t().reshape(-1)
    return weight.view(heads, head_dim, -1)[:, order].reshape(heads * head_dim, -1)


@attrs.frozen
class _Layer:
    attn_norm: torch.Tensor
    mlp_norm: torch.Tensor
    qkv: PackedLinear
    out: PackedLinear
    gate_up: PackedLinear
    down: PackedLinear


class LlamaDecoder:
    """The weights of one Llama model in one packed format, and the forward pass over them."""

    def __init__(self, model: Any, fmt: str) -> None:
        """Pack the weights of a loaded Hugging Face Llama `model` (which may be dropped afterwards)."""
        config = model.config
        self.fmt = fmt
        self.heads, self.kv_heads = config.num_attention_heads, config.num_key_value_heads
        self.head_dim = getattr(config, "head_dim", None) or config.hidden_size // self.heads
        self.eps = config.rms_norm_eps
        self.intermediate = config.intermediate_size
        self.context = config.max_position_embeddings
        self.embed = model.model.embed_tokens.weight.detach().float().clone()
        self.norm_shape = (self.embed.shape[1],)
        self.layers: list[_Layer] = []
        for layer in model.model.layers:
            attn, mlp = layer.self_attn, layer.mlp
            q = _interleave(attn.q_proj.weight.detach(), self.heads, self.head_dim)
            k = _interleave(attn.k_proj.weight.detach(), self.kv_heads, self.head_dim)
            self.layers.append(
                _Layer(
                    attn_norm=layer.input_layernorm.weight.detach().float().clone(),
                    mlp_norm=layer.post_attention_layernorm.weight.detach().float().clone(),
                    qkv=PackedLinear(torch.cat([q, k, attn.v_proj.weight.detach()]), fmt),
                    out=PackedLinear(attn.o_proj.weight, fmt),
                    gate_up=PackedLinear(torch.cat([mlp.gate_proj.weight, mlp.up_proj.weight]), fmt),
                    down=PackedLinear(mlp.down_proj.weight, fmt),
                )
            )
        self.norm = model.model.norm.weight.detach().float().clone()
        self.head = PackedLinear(model.lm_head.weight, HEAD_FORMAT.get(fmt, fmt))
        self.dtype = self.head.dtype
        theta = float(_rope_parameters(config)["rope_theta"])
        inverse = 1.0 / (theta ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim))
        angles = torch.outer(torch.arange(self.context).float(), inverse)
        self.rotations = torch.polar(torch.ones_like(angles), angles)  # [position, head_dim / 2], complex64

    def start(self, ids: torch.Tensor, mask: torch.Tensor, room: int) -> DecoderBatch:
        """A batch of left-padded prompts `ids` ([B, S], `mask` 1 for real tokens), with cache room for
        `room` more tokens each."""
        return DecoderBatch(self, ids, mask, room)

    def forward(
        self,
        tokens: torch.Tensor,
        positions: torch.Tensor,
        keys: list[torch.Tensor],
        values: list[torch.Tensor],
        start: int,
        attn_mask: torch.Tensor | None,
    ) -> torch.Tensor:
        """Hidden states after the last norm for `tokens` [B, S] at rotary `positions` [B, S], written
        into the caches at columns start..start+S; `attn_mask` [B, 1, S, start+S] (True: attend), or
        None for a causal batch without padding."""
        batch, width = tokens.shape
        rows = batch * width
        heads, kv_heads, head_dim, dtype = self.heads, self.kv_heads, self.head_dim, self.dtype
        qk_dim, shape = (heads + kv_heads) * head_dim, self.norm_shape
        rotation = self.rotations[positions].unsqueeze(2)  # [B, S, 1, head_dim / 2]
        end = start + width
        causal = attn_mask is None and width > 1
        # The residual stream stays float32 and two-dimensional ([B * S, hidden]: no reshapes around each
        # matmul); the matmuls, the attention and the caches run in the weights' dtype.
        hidden = self.embed[tokens.view(-1)]
        for layer, key_cache, value_cache in zip(self.layers, keys, values, strict=True):
            qkv = layer.qkv(F.rms_norm(hidden, shape, layer.attn_norm, self.eps))
            pairs = qkv[:, :qk_dim].float().view(batch, width, heads + kv_heads, head_dim // 2, 2)
            rotated = torch.view_as_real(torch.view_as_complex(pairs) * rotation).flatten(-2)  # [B, S, H + KV, hd]
            query = rotated[:, :, :heads].transpose(1, 2).to(dtype)
            key_cache[:, :, start:end] = rotated[:, :, heads:].transpose(1, 2)
            value_cache[:, :, start:end] = qkv[:, qk_dim:].view(batch, width, kv_heads, head_dim).transpose(1, 2)
            attended = F.scaled_dot_product_attention(
                query,
                key_cache[:, :, :end],
                value_cache[:, :, :end],
                attn_mask=attn_mask,
                is_causal=causal,
                enable_gqa=True,
            )
            hidden = hidden + layer.out(attended.transpose(1, 2).reshape(rows, heads * head_dim))
            gate_up = layer.gate_up(F.rms_norm(hidden, shape, layer.mlp_norm, self.eps))
            gate = F.silu(gate_up[:, : self.intermediate])
            hidden = hidden + layer.down(gate.mul_(gate_up[:, self.intermediate :]))
        return F.rms_norm(hidden, shape, self.norm, self.eps).view(batch, width, -1)

    def logits(self, hidden: torch.Tensor) -> np.ndarray:
        """Float32 logits for final hidden states [..., hidden]."""
        out: np.ndarray = self.head(hidden).float().numpy()
        return out

    def empty_cache(self, batch: int, length: int) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """Zeroed key and value caches for `batch` rows of `length` positions."""
        shape = (batch, self.kv_heads, length, self.head_dim)
        keys = [torch.zeros(shape, dtype=self.dtype) for _ in self.layers]
        return keys, [torch.zeros(shape, dtype=self.dtype) for _ in self.layers]

    def score(self, ids: list[int]) -> np.ndarray:
        """Logits at every position of one unpadded sequence ([len(ids), vocab]), as float32."""
        tokens = torch.tensor([ids])
        keys, values = self.empty_cache(1, len(ids))
        with torch.inference_mode():
            hidden = self.forward(tokens, torch.arange(len(ids)).unsqueeze(0), keys, values, 0, None)
            return self.logits(hidden[0])


class DecoderBatch:
    """One batch being decoded: its caches, padding and positions; rows leave it as they finish."""

    def __init__(self, decoder: LlamaDecoder, ids: torch.Tensor, mask: torch.Tensor, room: int) -> None:
        """Allocate caches for the prompts `ids` and `room` new tokens per row."""
        self.decoder = decoder
        self.valid = mask.bool()  # [B, columns so far]: False on left padding
        self.padded = bool((~self.valid).any())
        self.positions = (mask.cumsum(-1) - 1).clamp(min=0)
        self.ids = ids
        self.length = ids.shape[1] + room
        self.keys, self.values = decoder.empty_cache(ids.shape[0], self.length)
        self.filled = 0

    def prefill(self) -> np.ndarray:
        """Run the prompts; the next-token logits of each row, [B, vocab]."""
        width = self.ids.shape[1]
        attn_mask = None
        if self.padded:
            causal = torch.ones(width, width, dtype=torch.bool).tril()
            # A padding query attends to itself only: its output is never used, and a row with no key
            # to attend to would come out NaN.
            attn_mask = (causal & self.valid[:, None, :]) | torch.eye(width, dtype=torch.bool)
            attn_mask = attn_mask.unsqueeze(1)
        hidden = self.decoder.forward(self.ids, self.positions, self.keys, self.values, 0, attn_mask)
        self.filled = width
        return self.decoder.logits(hidden[:, -1])

    def step(self, tokens: list[int]) -> np.ndarray:
        """Feed one new token per remaining row; their next-token logits, [B, vocab]."""
        if self.filled >= self.length:
            msg = "the batch's KV cache is full"
            raise RuntimeError(msg)
        self.valid = torch.cat([self.valid, torch.ones(len(tokens), 1, dtype=torch.bool)], dim=1)
        self.positions = self.positions[:, -1:] + 1
        attn_mask = self.valid[:, None, None, :] if self.padded else None
        hidden = self.decoder.forward(
            torch.tensor(tokens).unsqueeze(1), self.positions, self.keys, self.values, self.filled, attn_mask
        )
        self.filled += 1
        return self.decoder.logits(hidden[:, -1])

    def keep(self, rows: list[int]) -> None:
        """Only these rows (indices into the current batch) go on."""
        index = torch.tensor(rows)
        self.keys = [k[index] for k in self.keys]
        self.values = [v[index] for v in self.values]
        self.valid, self.positions = self.valid[index], self.positions[index]
        self.padded = bool((~self.valid).any())
