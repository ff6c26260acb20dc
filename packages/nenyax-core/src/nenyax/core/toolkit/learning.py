"""What a learner computes from a group of episodes: each trajectory's advantage within its group."""

from __future__ import annotations

from nenyax.core.engine.learning import group_advantages, trainable_groups

__all__ = ["group_advantages", "trainable_groups"]
