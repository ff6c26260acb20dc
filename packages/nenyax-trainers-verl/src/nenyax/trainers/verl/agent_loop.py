"""`NenyaxAgentLoop`: verl's agent loop ``nenyax``, one Nenyax episode per row, in any mode.

verl makes one agent loop object per row (``hydra.utils.instantiate`` of the registry entry) and awaits its
``run(sampling_params, **row)`` on its worker's event loop. The row names the environment and the task
(`nenyax.trainers.verl.rows`); the episode is played by verl's own servers through `VerlServerProvider`
(token in, token out) behind a recording ``Endpoint``: a step session's chat, or a format's own loop through
core's recording proxy. The trajectory's one merged sample (`nenyax.core.merged_samples`: the environment's
and tools' tokens between two completions masked 0) is verl's ``AgentLoopOutput``, and its judged score is
``reward_score``.

An episode that failed for infrastructure (`infra_error`, `env_error`, `verifier_error`, `timeout`) is never a
reward of 0: its ``response_mask`` is all 0 (no token of it is trained on), ``reward_score`` is None, and
``extra_fields`` says so (``nenyax_trainable`` False, ``nenyax_status``). verl 0.9.1 has no way to drop one
sample from a batch; see the README for what verl then does with a None.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any
from uuid import uuid4

from nenyax.core import Endpoint, JsonlSink, TokenSample, Trajectory, load, merged_samples, new_run_dir
from nenyax.core.errors import UsageError
from nenyax.trainers.verl.provider import VerlServerProvider
from nenyax.trainers.verl.rows import AGENT_NAME
from verl.experimental.agent_loop.agent_loop import (
    AgentLoopBase,
    AgentLoopMetrics,
    AgentLoopOutput,
    _agent_loop_registry,
    register,
)

POLICY = "policy"
"""The name verl's model is played under."""

_ENVS: dict[str, Any] = {}
"""The environments loaded in this process, by URI (a worker plays many rows of each)."""
_PLAYS: Counter[tuple[str, str]] = Counter()
"""Episodes played of each (URI, task): each copy in a group gets its own sample number."""
_SINKS: dict[tuple[str, str], JsonlSink] = {}
"""The run directory each (runs folder, URI) streams to, one per process."""


def _environment(uri: str) -> Any:
    if uri not in _ENVS:
        _ENVS[uri] = load(uri)
    return _ENVS[uri]


def _sink(runs: str, env: Any) -> JsonlSink:
    key = (str(runs), env.uri)
    if key not in _SINKS:
        run_dir = new_run_dir(Path(runs), env.manifest, {"trainer": "verl"})
        _SINKS[key] = JsonlSink(run_dir / "trajectories.jsonl")
    return _SINKS[key]


def _field(row: dict[str, Any], name: str) -> Any:
    """A Nenyax field of the row: in ``extra_info`` (`verl_rows`), or a column of its own."""
    extra = row.get("extra_info")
    if isinstance(extra, dict) and extra.get(name) is not None:
        return extra[name]
    return row.get(name)


class NenyaxAgentLoop(AgentLoopBase):
    """One Nenyax episode of the row's task, played by verl's servers (see the module docstring)."""

    def __init__(self, *args: Any, runs: str | None = None, seed: int = 0, **kwargs: Any) -> None:
        """verl's arguments, and two of the registry entry's own keys (``agent_loop_config.yaml``): `runs`, a
        folder under which every episode is streamed to a run directory (``nenyax view`` and ``nenyax export``
        read it; one per worker process), and `seed`, the seed every episode is played with."""
        super().__init__(*args, **kwargs)
        self.runs, self.seed = runs, seed

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        """Play the row's task; the episode's tokens, mask, logprobs and judged score."""
        uri, task = _field(kwargs, "nenyax_uri"), _field(kwargs, "nenyax_task")
        if not uri or not task:
            msg = "A row routed to the nenyax agent loop names no nenyax_uri and nenyax_task; make rows with verl_rows."
            raise UsageError(msg)
        env = _environment(str(uri))
        response_length = int(self.rollout_config.response_length)
        provider = VerlServerProvider(
            self.server_manager,
            self.tokenizer,
            sampling_params,
            request_id=uuid4().hex,
            response_length=response_length,
        )
        sample = _PLAYS[uri, task]
        _PLAYS[uri, task] += 1
        uid = kwargs.get("uid")  # verl's id of the prompt its rollout.n copies share: one group
        started = time.perf_counter()
        try:
            trajectory = await env.arollout(
                Endpoint.over(provider, POLICY),
                task=str(task),
                seed=self.seed,
                sample=sample,
                group_id=f"verl:{uid if uid is not None else uuid4().hex}",
                observers=[] if self.runs is None else [_sink(self.runs, env)],
            )
        finally:
            await provider.aclose()
        return self.output(trajectory, response_length, time.perf_counter() - started)

    def output(self, trajectory: Trajectory, response_length: int, seconds: float) -> AgentLoopOutput:
        """The trajectory as verl's output: its first merged sample, cut at `response_length` as verl's own
        loops cut theirs, or (an episode that may not be trained on) one masked pad token and no reward."""
        samples, forks = merged_samples(trajectory)
        first = samples[0] if samples else None
        trainable = first is not None and first.trainable and first.logprobs is not None
        judgment = trajectory.judgment
        extra: dict[str, Any] = {
            "nenyax_status": trajectory.status.value,
            "nenyax_trainable": trainable,
            "nenyax_forked": forks.count,
            "nenyax_trajectory_id": trajectory.id,
            "nenyax_components": {} if judgment is None else dict(judgment.components),
            "turn_scores": [],
            "tool_rewards": [],
        }
        metrics = AgentLoopMetrics(generate_sequences=seconds)
        calls = len(trajectory.model_calls)
        if not trainable or first is None:
            tokenizer: Any = self.tokenizer  # verl annotates it as the AutoTokenizer factory
            pad = tokenizer.eos_token_id if tokenizer.pad_token_id is None else tokenizer.pad_token_id
            return AgentLoopOutput(
                prompt_ids=[int(pad)],
                response_ids=[int(pad)],
                response_mask=[0],
                response_logprobs=[0.0],
                reward_score=None,
                num_turns=2 * calls,
                metrics=metrics,
                extra_fields=extra,
            )
        return _trained_on(first, response_length, num_turns=2 * calls, metrics=metrics, extra=extra)


# Registered in this process, unless verl's worker read an entry from agent_loop_config_path first: hydra imports
# this module while instantiating that entry, and registering again would drop the entry's own keys (runs, seed)
# for every later row.
if AGENT_NAME not in _agent_loop_registry:
    register(AGENT_NAME)(NenyaxAgentLoop)


def _trained_on(sample: TokenSample, length: int, **fields: Any) -> AgentLoopOutput:
    logprobs = sample.logprobs or ()
    return AgentLoopOutput(
        prompt_ids=list(sample.prompt_ids),
        response_ids=list(sample.completion_ids[:length]),
        response_mask=list(sample.loss_mask[:length]),
        response_logprobs=list(logprobs[:length]),
        reward_score=sample.reward,
        num_turns=fields["num_turns"],
        metrics=fields["metrics"],
        extra_fields=fields["extra"],
    )
