"""A small arithmetic environment that loads offline, in whichever API the installed verifiers offers.

``verifiers:nenyax.adapters.verifiers.demo:load_environment`` is the adapter's example: a legacy
`SingleTurnEnv` over an in-memory dataset where verifiers 0.3 is installed, a v1 `Taskset` where only
v1 is (0.4). Both grade a ``\\boxed{}`` answer against the gold one, as gsm8k-style environments do.
"""

from __future__ import annotations

from typing import Any

QUESTIONS = (("What is 3 + 4?", "7"), ("What is 6 * 7?", "42"), ("What is 15 - 6?", "9"), ("What is 81 / 9?", "9"))
PROMPT = "Solve the problem. Put only the final number inside \\boxed{}."


def load_environment(num_examples: int = len(QUESTIONS), api: str | None = None) -> Any:
    """The demo with its first `num_examples` questions, in `api` (``legacy``, ``v1``; default: the one installed)."""
    from nenyax.adapters.verifiers.library import installed

    chosen = api or ("legacy" if installed().legacy else "v1")
    rows = QUESTIONS[:num_examples]
    if chosen == "legacy":
        from nenyax.adapters.verifiers._demo_legacy import build

        return build(rows, PROMPT)
    from nenyax.adapters.verifiers._demo_v1 import build_taskset

    return build_taskset(tuple(rows), PROMPT)
