"""Did-you-mean: the sentence an error adds when a name is unknown (one implementation, core's own)."""

from __future__ import annotations

from nenyax.core.errors import did_you_mean, did_you_mean_pool

__all__ = ["did_you_mean", "did_you_mean_pool"]
