"""`VerlServerProvider`: Nenyax's chat provider over verl's server manager, token in, token out.

verl owns inference: its agent loops reach the vLLM/SGLang servers it syncs the actor's weights into through
``server_manager.generate(request_id, *, prompt_ids, sampling_params) -> TokenOutput``. This provider is the
``tokens`` provider of `nenyax-providers-local` (`TokenServerProvider`: the chat template, tool-call parsing
and each later turn's prompt built on the earlier turns' exact ids) with its wire swapped for that call, so
``Endpoint.over(provider, ...)`` is a policy any Nenyax episode can play (a step session, a format's own loop
through the recording proxy) and what is recorded is exactly what verl's server sampled.

One provider is one episode: its ``request_id`` keeps verl's sticky session (the server's prefix cache) for
all of the episode's calls, and its response budget is verl's ``rollout.response_length``, counted from the
episode's first prompt.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nenyax.core.errors import InfraFailure, PolicyFailure, UsageError
from nenyax.providers.local.token_server import Sampled, TokenServerProvider

PASSED = frozenset({"stop", "presence_penalty", "frequency_penalty"})
"""What an episode's own request may ask of verl's server beside the trainer's sampling (both vLLM and SGLang
read these names); the trainer's temperature, top_p and top_k always win: its loss assumes them."""


class VerlServerProvider(TokenServerProvider):
    """Chat completions sampled by verl's servers for one episode (see the module docstring)."""

    name = "verl"

    def __init__(
        self,
        server_manager: Any,
        tokenizer: Any,
        sampling_params: dict[str, Any],
        *,
        request_id: str,
        response_length: int,
        revision: Callable[[], str] | None = None,
    ) -> None:
        """`sampling_params` are those verl hands the agent loop's ``run``; `tokenizer` is the trainer's."""
        super().__init__(tokenizer=tokenizer, revision=revision)
        self.server_manager, self.request_id = server_manager, request_id
        self.sampling_params = dict(sampling_params)
        self.response_length = response_length
        self._first_prompt: int | None = None

    async def generate(self, model: str, ids: list[int], sampling: dict[str, Any]) -> Sampled:
        """Sample on verl's server: the trainer's sampling, logprobs on, at most what is left of the budget."""
        if self._first_prompt is None:
            self._first_prompt = len(ids)
        left = self.response_length - (len(ids) - self._first_prompt)
        if left < 1:  # the policy's own length, as verl's tool loop ends an episode past it: never infrastructure
            msg = f"The episode used up verl's response_length ({self.response_length} tokens) before this call."
            raise PolicyFailure(msg)
        params = {k: v for k, v in sampling.items() if k in PASSED}
        params.update(self.sampling_params)
        params["logprobs"] = True  # what verl and Nenyax train on; verl's servers pop and translate it
        params["max_tokens"] = min(int(sampling.get("max_tokens") or left), left)
        asked = params["max_tokens"]
        try:
            output = await self.server_manager.generate(
                request_id=self.request_id, prompt_ids=ids, sampling_params=params
            )
        except (UsageError, InfraFailure):
            raise
        except Exception as exc:  # verl's servers and ray raise their own; to Nenyax it is infrastructure
            msg = f"verl's server manager failed a generate call ({type(exc).__name__}: {exc})."
            raise InfraFailure(msg) from exc
        if output.stop_reason == "aborted":
            msg = "verl's server aborted the generate call (its weights were being updated, or it was preempted)."
            raise InfraFailure(msg)
        completion = [int(i) for i in output.token_ids]
        if not output.log_probs or len(output.log_probs) != len(completion):
            msg = "verl's server returned no logprob for each sampled token; its servers must honour logprobs=True."
            raise InfraFailure(msg)
        finish = "length" if len(completion) >= asked else "stop"
        usage = {"prompt_tokens": len(ids), "completion_tokens": len(completion)}
        return Sampled(completion, [float(x) for x in output.log_probs], finish, usage)
