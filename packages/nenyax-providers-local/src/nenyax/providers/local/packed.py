"""A linear layer whose weight is stored in one of the decode formats: float32, bfloat16 or int4.

Decoding a small model on a CPU is bound by the bytes of weight read per token, so ``int4`` reads
an eighth of float32's: asymmetric 4-bit codes in groups of 32 input features with a scale and a
minimum per group (GGUF's Q4_1, so the linear layers of a Q4_1 GGUF re-pack without loss), through
ATen's CPU int4 matmul with bfloat16 activations. The scales and activations in bfloat16 move the
logits slightly, so it is an explicit choice recorded in the revision, never a silent default.

Not here: int8. fbgemm's dynamic int8 linear quantises activations per call across the whole batch
(a row's logits then depend on its batch-mates; measured error up to 21 logits on SmolLM2), and
ATen's weight-only int8 matmul is slower on CPU than float32.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

WEIGHT_FORMATS = ("float32", "bfloat16", "int4")
INT4_GROUP = 32


def usable_here(fmt: str) -> str | None:
    """Why `fmt` cannot run on this machine's CPU, or None when it can."""
    if fmt == "int4" and not hasattr(torch.ops.aten, "_weight_int4pack_mm_for_cpu"):
        return "int4 weights need torch 2.5 or newer (ATen's CPU int4 matmul)"
    return None


class PackedLinear:
    """``y = x @ W.T`` for ``x`` of shape [..., in], returning [..., out] in `dtype` (float32 for float32
    weights, bfloat16 for the others: casting each activation back and forth would cost an op each)."""

    def __init__(self, weight: torch.Tensor, fmt: str) -> None:
        """Pack `weight` ([out, in], any float dtype) into `fmt`."""
        self.fmt = fmt
        self.out_features, self.in_features = weight.shape
        self.dtype = torch.float32 if fmt == "float32" else torch.bfloat16
        weight = weight.detach().float().contiguous()
        self._packed: Any
        self._scales: torch.Tensor | None = None
        if fmt == "float32":
            self._packed = weight
        elif fmt == "bfloat16":
            self._packed = weight.to(torch.bfloat16)
        elif fmt == "int4":
            if self.in_features % INT4_GROUP:
                msg = f"int4 weights need input features divisible by {INT4_GROUP}, not {self.in_features}"
                raise ValueError(msg)
            groups = weight.view(self.out_features, -1, INT4_GROUP)
            low, high = groups.amin(-1), groups.amax(-1)
            scale = ((high - low) / 15).clamp(min=1e-8)
            levels = ((groups - low[..., None]) / scale[..., None]).round().clamp(0, 15)
            codes = levels.to(torch.int32).view(self.out_features, -1)
            self._packed = torch.ops.aten._convert_weight_to_int4pack_for_cpu(codes, 1)
            # ATen's int4 dequantises as (code - 8) * scale + zero, so the zero point sits at code 8.
            self._scales = torch.stack([scale, low + 8 * scale], -1).transpose(0, 1).contiguous().to(torch.bfloat16)
        else:
            msg = f"unknown weight format {fmt!r}"
            raise ValueError(msg)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """The layer's output for `x`."""
        if x.dtype != self.dtype:
            x = x.to(self.dtype)
        if self.fmt != "int4":
            return F.linear(x, self._packed)
        rows = x.reshape(-1, self.in_features)
        out = torch.ops.aten._weight_int4pack_mm_for_cpu(rows, self._packed, INT4_GROUP, self._scales)
        return out.view(*x.shape[:-1], self.out_features)
