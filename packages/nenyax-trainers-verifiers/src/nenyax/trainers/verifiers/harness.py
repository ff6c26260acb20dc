"""The harness of a Nenyax taskset's seat, run in-process against verifiers' interception endpoint.

verifiers' harness contract lets a harness run its loop in-process as long as every model call goes to
the interception endpoint it is handed (`vf.Harness.launch`'s docstring), and verifiers' trace records
each call there. Both paths speak to it through Nenyax's ``Endpoint("openai:<model>", base_url=<endpoint>)``,
unstreamed and asking for token ids (``return_token_ids``, logprobs): verifiers' own ``null`` chat program
streams, and its stream parser keeps neither (`verifiers.v1.dialects.chat.ChatStreamParser.finish`), so a
server's ids would never reach the trace.

- Step mode: one segment is one chat call on the conversation so far (`NenyaxEnv` plays the user).
- Rollout and task mode: the whole Nenyax episode; its native loop or harness reaches the model through
  Nenyax's recording proxy, whose policy is that Endpoint. The outcome is left on ``trace.info``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

import verifiers.v1 as vf
from nenyax.core import SAMPLING_KEYS, ChatRequest, Endpoint
from nenyax.trainers.verifiers import outcome
from nenyax.trainers.verifiers.taskset import environment
from verifiers.v1.dialects.chat import message_to_wire


class NenyaxHarnessConfig(vf.HarnessConfig):
    """``--env.player.harness.*``."""

    model_retries: int = 6
    """How many times a failed model call is tried again (Nenyax's ``openai`` provider backs off between
    tries); what still fails ends the episode ``infra_error``, with no reward."""


@contextlib.contextmanager
def _endpoint(ctx: Any, trace: Any, endpoint: str, secret: str, retries: int) -> Iterator[Endpoint]:
    """Nenyax's policy over the interception endpoint, with its per-rollout bearer token and the run's sampling."""
    key_var = f"NENYAX_VERIFIERS_KEY_{trace.id}"
    os.environ[key_var] = secret
    sampling = {k: v for k, v in ctx.sampling.model_dump(exclude_none=True).items() if k in SAMPLING_KEYS}
    try:
        options = {"max_retries": retries}
        yield Endpoint(
            f"openai:{ctx.model}", base_url=endpoint, api_key_env=key_var, provider_options=options, **sampling
        )
    finally:
        os.environ.pop(key_var, None)


class NenyaxHarness(vf.Harness[NenyaxHarnessConfig]):
    """One chat call per segment (step tasks), or the whole Nenyax episode (rollout and task), in-process."""

    APPENDS_SYSTEM_PROMPT = True
    SUPPORTS_RESUME = True  # each later segment is launched again on the conversation so far
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(
        self,
        ctx: Any,
        trace: Any,
        runtime: Any,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: Any,
    ) -> Any:
        with _endpoint(ctx, trace, endpoint, secret, self.config.model_retries) as policy:
            try:
                if data.mode == "step":
                    system, prompt = self.resolve_prompt(data)
                    messages = [{"role": "system", "content": system}] if system else []
                    if isinstance(prompt, str):
                        messages.append({"role": "user", "content": prompt})
                    else:
                        messages.extend(message_to_wire(m) for m in prompt or ())
                    await policy.send(ChatRequest(model=policy.model, messages=tuple(messages)))
                else:
                    trajectory = await environment(data.uri).arollout(policy, task=data.task_id, seed=data.seed)
                    trace.info[outcome.INFO_KEY] = outcome.summary(trajectory)
                    # The episode's record is the authority on its calls' ids (a native loop that streams reaches
                    # the interception as a relayed stream, whose parser keeps no ids).
                    trace.info[outcome.CALLS_KEY] = outcome.recorded_token_ids(trajectory)
            finally:
                await policy.aclose()
        return vf.ProgramResult(exit_code=0, stdout="", stderr="")
