"""Token samples a trainer takes, made from one trajectory's recorded model calls, in any mode.

A trainer owns its loop and wants back exactly what its model sampled: the prompt's token ids, the
completion's, the sampler's logprob of each completion token (where recorded) and a loss mask that is 1
only on sampled tokens. Nothing here re-tokenizes text; a call recorded without token ids makes no sample.

- `merged_samples`: the calls of an episode laid end to end. Each later call's prompt extends the
  sequence so far (the environment's and tools' tokens come between two completions, masked 0), so one
  sample holds the whole episode. Where a prompt does not extend it (a harness that re-rendered the
  transcript, trimmed its history, or started a sub-agent), the sample is cut there and a new one forks
  from that prompt: `Forks.count` says how many times, and where.
- `step_samples`: one sample per model call (its prompt, its completion).

The reward is the trajectory's score where it may be trained on (``ok``, ``policy_error``); an episode
that failed for infrastructure (``env_error``, ``verifier_error``, ``infra_error``, ``timeout``...) has no
reward (None), never 0, and `trainable` is False.
"""

from __future__ import annotations

import attrs

from nenyax.core.contract.trajectory import ModelCall, Trajectory


@attrs.frozen(kw_only=True)
class TokenSample:
    """One sequence to train on: a prompt, then a completion whose sampled tokens are masked 1."""

    prompt_ids: tuple[int, ...]
    completion_ids: tuple[int, ...]
    """The sampled tokens, with (in a merged sample) the environment's and tools' tokens between them."""
    logprobs: tuple[float, ...] | None
    """The sampler's logprob of each completion token (0.0 where the mask is 0); None where a call of the
    sample was recorded without them."""
    loss_mask: tuple[int, ...]
    """1 on each token the model sampled, 0 on the tokens the environment and tools added (TRL's ``env_mask``)."""
    reward: float | None
    """The trajectory's score; None where it may not be trained on (see `trainable`)."""
    trainable: bool
    """Whether the episode's status allows training on it (``ok`` or ``policy_error``)."""
    calls: tuple[int, ...]
    """The indexes (in ``model_calls``) of the calls this sample holds."""
    trajectory_id: str
    task_id: str | None
    group_id: str | None


@attrs.frozen
class Forks:
    """Where the calls of a trajectory could not be laid end to end: the calls that began a new sample."""

    at: tuple[int, ...] = ()

    @property
    def count(self) -> int:
        return len(self.at)

    def sentence(self, trajectory: Trajectory) -> str | None:
        """One sentence saying where the episode forked, or None when it did not."""
        if not self.at:
            return None
        calls = ", ".join(str(i + 1) for i in self.at)
        return (
            f"The episode of task {trajectory.task_id} forked into {self.count + 1} samples: the prompt of model "
            f"call {calls} (of {len(trajectory.model_calls)}) does not extend the tokens before it."
        )


def recorded(call: ModelCall) -> bool:
    """Whether `call` holds what a sample needs: its prompt's and its completion's token ids."""
    return call.prompt_token_ids is not None and call.completion_token_ids is not None


def _tokens(call: ModelCall) -> tuple[list[int], list[int], list[float] | None] | None:
    """The call's prompt ids, completion ids and logprob per completion token (None where not recorded, or
    not one per token); None for a call without token ids or without a completion."""
    prompt, completion, logprobs = call.prompt_token_ids, call.completion_token_ids, call.logprobs
    if prompt is None or not completion:
        return None
    exact = logprobs is not None and len(logprobs) == len(completion)
    return list(prompt), list(completion), [float(x) for x in logprobs] if exact and logprobs else None


def unrecorded(trajectory: Trajectory) -> list[int]:
    """The indexes of the calls recorded without token ids."""
    return [i for i, call in enumerate(trajectory.model_calls) if not recorded(call)]


def _reward(trajectory: Trajectory) -> tuple[float | None, bool]:
    if trajectory.status.trainable and trajectory.judgment is not None:
        return trajectory.judgment.score, True
    return None, False


def step_samples(trajectory: Trajectory) -> list[TokenSample]:
    """One sample per model call with token ids and a completion, in order."""
    reward, trainable = _reward(trajectory)
    samples = []
    for index, call in enumerate(trajectory.model_calls):
        if (tokens := _tokens(call)) is None:
            continue
        prompt, completion, logprobs = tokens
        samples.append(
            TokenSample(
                prompt_ids=tuple(prompt),
                completion_ids=tuple(completion),
                logprobs=None if logprobs is None else tuple(logprobs),
                loss_mask=(1,) * len(completion),
                reward=reward,
                trainable=trainable,
                calls=(index,),
                trajectory_id=trajectory.id,
                task_id=trajectory.task_id,
                group_id=trajectory.group_id,
            )
        )
    return samples


def merged_samples(trajectory: Trajectory) -> tuple[list[TokenSample], Forks]:
    """The episode's calls laid end to end, forked where a prompt does not extend what came before.

    Calls without token ids are skipped (`unrecorded` names them; a caller that needs every call refuses
    first). Returns the samples and where the episode forked.
    """
    reward, trainable = _reward(trajectory)
    samples: list[TokenSample] = []
    forks: list[int] = []
    prompt: list[int] = []
    tail: list[int] = []  # the completion part: sampled tokens and what the environment added between them
    logprobs: list[float] | None = []
    mask: list[int] = []
    calls: list[int] = []

    def close() -> None:
        if calls:
            samples.append(
                TokenSample(
                    prompt_ids=tuple(prompt),
                    completion_ids=tuple(tail),
                    logprobs=None if logprobs is None else tuple(logprobs),
                    loss_mask=tuple(mask),
                    reward=reward,
                    trainable=trainable,
                    calls=tuple(calls),
                    trajectory_id=trajectory.id,
                    task_id=trajectory.task_id,
                    group_id=trajectory.group_id,
                )
            )

    for index, call in enumerate(trajectory.model_calls):
        if (tokens := _tokens(call)) is None:
            continue
        ids, completion, sampled = tokens
        sequence = prompt + tail
        if calls and ids[: len(sequence)] == sequence:
            added = ids[len(sequence) :]  # the environment's and tools' tokens since the last completion
            tail += added
            logprobs = None if logprobs is None else [*logprobs, *[0.0] * len(added)]
            mask += [0] * len(added)
        else:
            if calls:
                forks.append(index)
                close()
            prompt, tail, logprobs, mask, calls = ids, [], [], [], []
        tail += completion
        logprobs = None if logprobs is None or sampled is None else [*logprobs, *sampled]
        mask += [1] * len(completion)
        calls.append(index)
    close()
    return samples, Forks(tuple(forks))
