"""A linear layer whose weight is stored in one of the decode formats: float32, bfloat16, int4 or int8.

Decoding a small model on a CPU is bound by the bytes of weight read per token, so ``int4`` reads
an eighth of float32's: asymmetric 4-bit codes in groups of 32 input features with a scale and a
minimum per group (GGUF's Q4_1, so the linear layers of a Q4_1 GGUF re-pack without loss), through
ATen's CPU int4 matmul with bfloat16 activations. ``int8`` is symmetric 8-bit codes per group of 32
(GGUF's Q8_0, how SmolLM2's GGUF keeps its output projection), run as two int4 matmuls. The scales
and activations in bfloat16 move the logits slightly, so these formats are an explicit choice
recorded in the revision, never a silent default.

Not used: fbgemm's dynamic int8 linear quantises activations per call across the whole batch (a
row's logits then depend on its batch-mates; measured error up to 21 logits on SmolLM2), and ATen's
per-channel int8 matmul loses the Q8_0 groups (0.23 logits).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

INT4_GROUP = 32


# The overload itself: resolving torch.ops' attribute chain on every call costs a microsecond or two.
_INT4_OP: Any = getattr(torch.ops.aten, "_weight_int4pack_mm_for_cpu", None)
_INT4_MM: Any = _INT4_OP.default if _INT4_OP is not None else None


def usable_here(fmt: str) -> str | None:
    """Why `fmt` cannot run on this machine's CPU, or None when it can."""
    if fmt in ("int4", "int8") and _INT4_MM is None:
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
        self._scales: Any = None
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
        elif fmt == "int8":
            self._packed, self._scales = _int8_as_two_int4(weight)
        else:
            msg = f"unknown weight format {fmt!r}"
            raise ValueError(msg)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """The layer's output for `x`."""
        if x.dtype != self.dtype:
            x = x.to(self.dtype)
        if self.fmt in ("float32", "bfloat16"):
            return F.linear(x, self._packed)
        flat = x.dim() == 2
        rows = x if flat else x.reshape(-1, self.in_features)
        if self.fmt == "int4":
            out = _INT4_MM(rows, self._packed, INT4_GROUP, self._scales)
        else:  # the high nibbles' product carries the magnitude: add the low ones' to it in float32
            high = _INT4_MM(rows, self._packed[0], INT4_GROUP, self._scales[0])
            out = high.float().add_(_INT4_MM(rows, self._packed[1], INT4_GROUP, self._scales[1]))
        return out if flat else out.view(*x.shape[:-1], self.out_features)


def _int8_as_two_int4(weight: torch.Tensor) -> tuple[tuple[Any, Any], tuple[torch.Tensor, torch.Tensor]]:
    """Symmetric int8 codes per group of 32 (GGUF's Q8_0), split as ``q = 16 * high + low`` into two int4
    matrices: ATen has a fast CPU matmul for group-wise int4 but none for group-wise int8."""
    out_features = weight.shape[0]
    groups = weight.view(out_features, -1, INT4_GROUP)
    scale = (groups.abs().amax(-1) / 127).clamp(min=1e-12)
    codes = (groups / scale[..., None]).round().clamp(-128, 127).to(torch.int32)
    high, low = codes >> 4, codes & 15  # high in -8..7 (an arithmetic shift), low in 0..15

    def pack(nibbles: torch.Tensor) -> Any:
        return torch.ops.aten._convert_weight_to_int4pack_for_cpu(nibbles.view(out_features, -1), 1)

    def scales(step: torch.Tensor, zero: torch.Tensor) -> torch.Tensor:
        # ATen dequantises as (code - 8) * step + zero.
        return torch.stack([step, zero], -1).transpose(0, 1).contiguous().to(torch.bfloat16)

    packed = (pack(high + 8), pack(low))
    return packed, (scales(16 * scale, torch.zeros_like(scale)), scales(scale, 8 * scale))
