"""Numpy arrays in records: what serde writes for an array met in an observation, action or info."""

from __future__ import annotations

from nenyax.core.contract.arrays import decode, decode_all, encode, is_encoded

__all__ = ["decode", "decode_all", "encode", "is_encoded"]
