"""Recorded trajectories as Tinker training data: one `tinker.Datum` per model call, no re-tokenisation.

Tinker's losses read next-token-aligned tensors: position ``i`` of the model input predicts token ``i + 1``
of the whole sequence (prompt, then completion). So a call's ids ``prompt + completion`` become
``model_input = ids[:-1]`` and ``target_tokens = ids[1:]``; the ``len(prompt) - 1`` targets that are
prompt tokens are masked the way the RL losses expect, with advantage 0 and sampler logprob 0 (the
importance-sampling, PPO, CISPO and GSPO losses all weight each token's term by its advantage, so a zero
advantage contributes nothing). GSPO also averages its sequence log-ratio over the tokens
``sequence_ratio_mask`` marks, which are the completion's only.

The logprobs are the sampler's, recorded with the call (`ModelCall.logprobs`): the behaviour policy the
losses correct for. A call without token ids or logprobs cannot be trained on without re-tokenising, so
it is refused in one sentence rather than guessed at.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from nenyax.core import Group, ModelCall, Trajectory
from nenyax.core.errors import UsageError
from nenyax.core.toolkit.learning import group_advantages

LOSSES = ("importance_sampling", "ppo", "cispo", "gspo")
"""Tinker's built-in RL losses this learner drives (its ``LossFnType`` names)."""


@attrs.frozen(kw_only=True)
class Batch:
    """The data of one update, and what was left out of it."""

    data: tuple[Any, ...]
    """The `tinker.Datum` of every call that carries a learning signal."""
    completion_tokens: int
    """Completion tokens trained on (the unmasked targets)."""
    calls_without_signal: int
    """Calls left out because their episode's advantage is 0 (a group whose members all scored alike):
    every loss term would be multiplied by 0, so sending them would only cost service time."""


def _checked(call: ModelCall, trajectory: Trajectory) -> tuple[list[int], list[int], list[float]]:
    prompt, completion, logprobs = call.prompt_token_ids, call.completion_token_ids, call.logprobs
    where = f"model call {call.id} of trajectory {trajectory.id}"
    if prompt is None or completion is None or logprobs is None:
        msg = (
            f"The {where} was recorded without token ids and logprobs, so the tinker learner cannot train on "
            "it; roll out with the learner's own policy (or a provider that records them)."
        )
        raise UsageError(msg)
    if len(logprobs) != len(completion):
        msg = f"The {where} has {len(completion)} completion tokens but {len(logprobs)} logprobs."
        raise UsageError(msg)
    if not prompt:
        msg = f"The {where} has an empty prompt, so its first completion token has nothing to be predicted from."
        raise UsageError(msg)
    return list(prompt), list(completion), [float(x) for x in logprobs]


def call_datum(call: ModelCall, trajectory: Trajectory, advantage: float, *, loss: str) -> Any:
    """The `tinker.Datum` of one recorded call whose episode earned `advantage` (see the module docstring)."""
    import tinker

    prompt, completion, logprobs = _checked(call, trajectory)
    ids = prompt + completion
    masked = len(prompt) - 1
    inputs: dict[str, Any] = {
        "target_tokens": ids[1:],
        "logprobs": [0.0] * masked + logprobs,
        "advantages": [0.0] * masked + [float(advantage)] * len(completion),
    }
    if loss == "gspo":
        inputs["sequence_ratio_mask"] = [0.0] * masked + [1.0] * len(completion)
    return tinker.Datum(model_input=tinker.ModelInput.from_ints(ids[:-1]), loss_fn_inputs=inputs)


def batch(groups: Sequence[Group], *, loss: str, scale: str = "group") -> Batch:
    """Every call of every member of `groups` as a Datum, its episode's group advantage on each completion
    token (`nenyax.core.engine.learning.group_advantages`); calls with no signal are counted, not sent."""
    data: list[Any] = []
    tokens = idle = 0
    for group in groups:
        for trajectory, advantage in zip(group.trajectories, group_advantages(group, scale=scale), strict=True):
            for call in trajectory.model_calls:
                if not call.completion_token_ids:
                    continue  # nothing was sampled: no target to train
                if advantage == 0.0:
                    idle += 1
                    continue
                data.append(call_datum(call, trajectory, advantage, loss=loss))
                tokens += len(call.completion_token_ids)
    return Batch(data=tuple(data), completion_tokens=tokens, calls_without_signal=idle)
