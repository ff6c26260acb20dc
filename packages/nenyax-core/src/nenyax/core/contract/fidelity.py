"""Token fidelity: whether an episode's recorded token ids are what a learner may train on as they are.

A learner trains on the token ids the sampler produced. A multi-turn episode re-renders its transcript
as text for each call, and re-tokenising that text can give other ids than the ones sampled (a BPE
merge across the turn boundary, a template that strips whitespace, a tool call written back in
another spelling). Then what the model saw on turn 3 is not the continuation of what it sampled on
turn 2, and training on the record teaches the wrong thing.

The rule, checked call by call (no other tool checks it):

1. Each call's completion ids decode to its recorded text (a reply that came back as tool calls is
   exempt: its text is what was left outside the calls).
2. Each call's prompt ids begin with the previous call's prompt ids followed by its completion ids.
   The chat template's turn separators (the end-of-turn token when the model did not sample one, the
   newline and the next turn's header) come *after* that prefix, so they never break it. A call with
   the same prompt as the one before (one of ``n`` samples) is held to the call before both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from nenyax.core.contract.trajectory import ModelCall

Detokenize = Callable[[Sequence[int]], "str | None"]


@attrs.frozen(kw_only=True)
class Fidelity:
    """The verdict on one episode's model calls."""

    faithful: bool | None
    """True: both rules hold for every call. False: one breaks (see `call` and `reason`). None: not known
    (no calls, no token ids, or the completion text could not be decoded to compare)."""
    call: int | None = None
    """The 1-based number of the first call where it breaks (or where it could not be known)."""
    reason: str = ""
    """What broke, or why it is not known, in one sentence."""
    calls: int = 0
    """How many calls were checked."""


def _first_difference(a: Sequence[int], b: Sequence[int]) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


def token_fidelity(calls: Sequence[ModelCall], detokenize: Detokenize | None = None) -> Fidelity:
    """Check `calls` (one episode's, in order) against the rule above; `detokenize` decodes ids as the
    model's tokenizer does (None: rule 1 cannot be checked, so the verdict is at best unknown)."""
    if not calls:
        return Fidelity(faithful=None, reason="The episode made no model calls.")
    unknown: Fidelity | None = None
    anchor: int | None = None  # the index of the call this one must extend
    for index, call in enumerate(calls):
        number = index + 1
        if call.prompt_token_ids is None or call.completion_token_ids is None:
            return Fidelity(
                faithful=None, call=number, calls=len(calls), reason=f"Call {number} recorded no token ids."
            )
        if not call.response.get("tool_calls"):
            text = detokenize(call.completion_token_ids) if detokenize is not None else None
            recorded = call.response.get("content") or ""
            if text is None:
                unknown = unknown or Fidelity(
                    faithful=None,
                    call=number,
                    calls=len(calls),
                    reason="The model's tokenizer is not at hand to decode the completion ids.",
                )
            elif text != recorded:
                return Fidelity(
                    faithful=False,
                    call=number,
                    calls=len(calls),
                    reason=f"Call {number}'s completion ids decode to {text[:60]!r}, not to {recorded[:60]!r}.",
                )
        if index and calls[index - 1].prompt_token_ids != call.prompt_token_ids:
            anchor = index - 1  # else: a sibling sample of the call before, held to the same one
        if anchor is None:
            continue
        before = calls[anchor]
        expected = (*(before.prompt_token_ids or ()), *(before.completion_token_ids or ()))
        if tuple(call.prompt_token_ids[: len(expected)]) != expected:
            at = _first_difference(expected, call.prompt_token_ids)
            return Fidelity(
                faithful=False,
                call=number,
                calls=len(calls),
                reason=(
                    f"Call {number}'s prompt ids do not begin with call {anchor + 1}'s prompt and completion ids: "
                    f"they differ at token {at} of {len(expected)} (the transcript was re-tokenised differently "
                    "from what was sampled)."
                ),
            )
    if unknown is not None:
        return unknown
    if len(calls) == 1:
        return Fidelity(faithful=True, calls=1, reason="Its completion ids decode to its recorded text.")
    return Fidelity(
        faithful=True,
        calls=len(calls),
        reason=f"All {len(calls)} calls' completion ids decode to their text, and each prompt extends the call before.",
    )
