"""Reading a ``/call`` result: ``{"ok": true, "output": {...}}`` or ``{"ok": false, "error": ...}``.

A result that cannot be read as a verdict (not JSON, the wrong shape, a reward that is not a finite
number) raises `VerifierFailure`: the step is kept with the error and the raw text, and the episode
ends ``verifier_error``, which is never scored nor trained on. A refusal (``ok: false``) is the
policy's failure, with the server's own message.
"""

from __future__ import annotations

import math
from typing import Any

import attrs

from nenyax.adapters.ors.wire import loads
from nenyax.core import PolicyFailure, VerifierFailure

_RAW_SHOWN = 200


@attrs.frozen(kw_only=True)
class Output:
    """A successful call's output, checked."""

    blocks: list[Any]
    metadata: Any
    reward: float | None
    finished: bool

    def as_json(self) -> dict[str, Any]:
        """The output as the server sent it (the step's ``info.output``)."""
        return {"blocks": self.blocks, "metadata": self.metadata, "reward": self.reward, "finished": self.finished}


def _malformed(base_url: str, what: str, why: str, raw: str) -> VerifierFailure:
    shown = raw if len(raw) <= _RAW_SHOWN else raw[:_RAW_SHOWN] + "..."
    return VerifierFailure(f"The ORS server at {base_url} sent a malformed result for {what} ({why}): {shown!r}.")


def read_output(data: str, *, base_url: str, what: str) -> Output:
    """Check and return the output in `data` (the ``end`` event's JSON)."""
    try:
        result = loads(data)
    except ValueError:
        raise _malformed(base_url, what, "not JSON", data) from None
    if not isinstance(result, dict) or not isinstance(result.get("ok"), bool):
        raise _malformed(base_url, what, "no boolean 'ok'", data)
    if not result["ok"]:
        error = " ".join(str(result.get("error", "no reason given")).split())
        msg = f"The ORS server rejected {what}: {error}"
        raise PolicyFailure(msg if msg.endswith((".", "?", "!", ")")) else msg + ".")
    output = result.get("output")
    if not isinstance(output, dict):
        raise _malformed(base_url, what, "no 'output' object", data)
    blocks = output.get("blocks")
    if not isinstance(blocks, list) or not all(isinstance(b, dict) for b in blocks):
        raise _malformed(base_url, what, "'blocks' is not a list of objects", data)
    finished = output.get("finished", False)
    if not isinstance(finished, bool):
        raise _malformed(base_url, what, "'finished' is not a boolean", data)
    reward = output.get("reward")
    if reward is not None:
        if isinstance(reward, bool) or not isinstance(reward, int | float):
            raise _malformed(base_url, what, f"the reward is {type(reward).__name__}, not a number", data)
        if not math.isfinite(reward):
            msg = (
                f"The ORS server at {base_url} returned the non-finite reward {reward!r} for {what}; "
                "it is recorded here and never scored."
            )
            raise VerifierFailure(msg)
        reward = float(reward)
    return Output(blocks=blocks, metadata=output.get("metadata"), reward=reward, finished=finished)
