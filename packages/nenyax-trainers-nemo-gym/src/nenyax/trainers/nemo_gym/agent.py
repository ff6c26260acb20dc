"""`NenyaxAgent`: a NeMo Gym agent server (nemo-gym's own `SimpleResponsesAPIAgent`) whose `/run` plays one
Nenyax episode against the trainer's policy and answers NeMo Gym's verify response.

NeMo RL (and the verl / miles NeMo Gym recipes) post each dataset row to an agent's `/run` and train on the
`response.output` items that carry `prompt_token_ids`, `generation_token_ids` and `generation_log_probs`, with
`reward` as the episode's reward. The policy is the trainer's OpenAI-compatible server, which NeMo Gym names in
its global config as `policy_base_url` (one URL or a list), `policy_model_name` and `policy_api_key`: this
agent's config reads them the way nemo-gym's own model-server configs do (`${policy_base_url}`).
"""

from __future__ import annotations

import itertools
from typing import Any

from fastapi import HTTPException
from fastapi.responses import JSONResponse
from pydantic import ConfigDict, PrivateAttr

from nemo_gym.base_resources_server import BaseRunRequest, BaseVerifyResponse
from nemo_gym.base_responses_api_agent import BaseResponsesAPIAgentConfig, SimpleResponsesAPIAgent
from nemo_gym.openai_utils import NeMoGymResponse, NeMoGymResponseCreateParamsNonStreaming
from nenyax.core import Endpoint, Environment, load
from nenyax.trainers.nemo_gym.mapping import failure_body, verify_response

TASK_KEY = "nenyax_task"
"""The row field naming the Nenyax task the row stands for (`rows()` writes it)."""
SEED_KEY = "nenyax_seed"
"""An optional row field: the episode's seed (default: the environment's own)."""


class NenyaxAgentConfig(BaseResponsesAPIAgentConfig):
    """The agent server's config: which environment, and the trainer's policy server."""

    env: str
    """The Nenyax environment URI every row's task comes from (`reasoning_gym:basic_arithmetic?size=2`)."""
    policy_base_url: str | list[str]
    """The trainer's OpenAI-compatible base URL(s), `.../v1` (NeMo RL hands a list, one per vLLM server)."""
    policy_model_name: str
    """The model name the policy server serves."""
    max_tokens: int | None = None
    """Tokens per model call when the row's `responses_create_params` names no `max_output_tokens`."""
    temperature: float | None = None
    """Sampling temperature when the row names none."""
    timeout: float | None = None
    """Seconds an episode may take (then it ends `timeout`: an infrastructure failure, no reward)."""
    max_retries: int | None = None
    """Retries of a model call that failed for the network or a 5xx (default: the openai provider's 6)."""


class NenyaxRunRequest(BaseRunRequest):
    """A `/run` body: NeMo Gym's row (`responses_create_params`, `agent_ref`, `_ng_*` indices) plus the task."""

    model_config = ConfigDict(extra="allow")


class NenyaxVerifyResponse(BaseVerifyResponse):
    """The `/run` answer: the row echoed, `response` (the Responses API object) and `reward`, plus `nenyax_*`."""

    model_config = ConfigDict(extra="allow")


class NenyaxAgent(SimpleResponsesAPIAgent):
    """Plays the row's Nenyax task with `Endpoint("openai:<policy_model_name>", base_url=<policy_base_url>)`."""

    config: NenyaxAgentConfig
    model_config = ConfigDict(arbitrary_types_allowed=True)
    environment: Environment | None = None
    """Loaded on the first episode (or handed in by `serve`), then shared by every episode."""
    _urls: Any = PrivateAttr()

    def model_post_init(self, context: Any, /) -> None:
        urls = self.config.policy_base_url
        self._urls = itertools.cycle([urls] if isinstance(urls, str) else list(urls))

    @property
    def env(self) -> Environment:
        if self.environment is None:
            self.environment = load(self.config.env)
        return self.environment

    async def responses(self, body: NeMoGymResponseCreateParamsNonStreaming) -> NeMoGymResponse:
        """Not served: an episode needs its task, which only a `/run` row names."""
        raise HTTPException(status_code=501, detail=f"Post the row to /run with its {TASK_KEY!r}.")

    async def run(self, body: NenyaxRunRequest) -> Any:  # type: ignore[override]
        """Play the row's task once; a trainable episode is a verify response, a failed one an HTTP 503."""
        row = body.model_dump()
        task = row.get(TASK_KEY)
        if not isinstance(task, str) or not task:
            raise HTTPException(status_code=422, detail=f"The row names no {TASK_KEY!r} (write rows with rows()).")
        params = body.responses_create_params
        sampling = {
            "max_tokens": params.max_output_tokens or self.config.max_tokens,
            "temperature": self.config.temperature if params.temperature is None else params.temperature,
            "top_p": params.top_p,
        }
        policy = Endpoint(
            f"openai:{self.config.policy_model_name}",
            base_url=next(self._urls),
            provider_options={} if self.config.max_retries is None else {"max_retries": self.config.max_retries},
            **{k: v for k, v in sampling.items() if v is not None},
        )
        try:
            trajectory = await self.env.arollout(
                policy,
                task=task,
                seed=row.get(SEED_KEY),
                sample=int(row.get("_ng_rollout_index") or 0),
                timeout=self.config.timeout,
            )
        finally:
            await policy.aclose()
        # Only ok and policy_error episodes are ever a reward; env/verifier/infra errors and timeouts are not.
        if not trajectory.status.trainable or trajectory.judgment is None:
            return JSONResponse(status_code=503, content=failure_body(trajectory))
        return NenyaxVerifyResponse.model_validate(verify_response(row, trajectory, self.config.policy_model_name))
