"""slime's and miles' `Sample`, the fields their hooks read and write (``miles/utils/types.py``): neither
trainer is on the package registry, so the tests hand the hooks this copy of its shape."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Sample:
    group_index: int | None = None
    index: int | None = None
    prompt: str | list[dict[str, str]] = ""
    tokens: list[int] = field(default_factory=list)
    response: str = ""
    response_length: int = 0
    label: str | None = None
    reward: float | dict[str, Any] | None = None
    loss_mask: list[int] | None = None
    rollout_log_probs: list[float] | None = None
    remove_sample: bool = False

    class Status(enum.Enum):
        PENDING = "pending"
        COMPLETED = "completed"
        TRUNCATED = "truncated"
        ABORTED = "aborted"
        FAILED = "failed"

    status: Status = Status.PENDING
    metadata: dict = field(default_factory=dict)
