"""Two small HUD tasksets shipped with the adapter: offline, graded deterministically.

``hud:nenyax.adapters.hud.example:arithmetic`` asks four sums; each row carries its reference answer in
its ``answer`` column, so the taskset reaches **audited**. ``hud:nenyax.adapters.hud.example:haiku``
asks for a three-line poem and grades its shape; it has no reference answer, so it reaches
**trainable** at most. The tasksets are built on first access (a module ``__getattr__``): every module
of this distribution imports without hud.
"""

from __future__ import annotations

import functools
import re
from typing import Any

SUMS = ((3, 4), (6, 7), (15, 27), (120, 5))
TOPICS = ("rain", "the sea", "a cat")
EXPORTS = ("arithmetic", "haiku")
"""The tasksets this module offers (built by `__getattr__`, so not names ruff or mypy can see)."""


def last_integer(text: Any) -> int | None:
    """The last integer in `text` (what a sum's answer is read as), or None."""
    found = re.findall(r"-?\d+", str(text or ""))
    return int(found[-1]) if found else None


def haiku_score(text: Any) -> float:
    """1 for exactly three non-empty lines, less the further it is from three, 0 for nothing."""
    lines = [line for line in str(text or "").splitlines() if line.strip()]
    return 0.0 if not lines else max(0.0, 1.0 - abs(len(lines) - 3) / 3)


@functools.cache
def _build() -> dict[str, Any]:
    from hud import Environment, Taskset

    env = Environment("nenyax-examples")

    @env.template(description="Add two integers; the reply's last integer is graded against the sum.")
    async def add(a: int, b: int) -> Any:
        answer = yield f"What is {a} + {b}? Reply with the number only."
        yield 1.0 if last_integer(answer) == a + b else 0.0

    @env.template(description="Write a haiku; graded on having three lines.")
    async def poem(topic: str) -> Any:
        answer = yield f"Write a haiku about {topic}: three short lines, nothing else."
        yield {"score": haiku_score(answer), "content": "three non-empty lines score 1"}

    rows = []
    for a, b in SUMS:
        task = add(a=a, b=b)
        task.columns = {"answer": str(a + b)}
        rows.append(task)
    return {
        "env": env,
        "arithmetic": Taskset("arithmetic", rows),
        "haiku": Taskset("haiku", [poem(topic=topic) for topic in TOPICS]),
    }


def __getattr__(name: str) -> Any:
    if name in ("env", *EXPORTS):
        return _build()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), "env", *EXPORTS])
