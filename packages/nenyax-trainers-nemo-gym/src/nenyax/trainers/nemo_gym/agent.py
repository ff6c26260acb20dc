"""`NenyaxAgent`: a NeMo Gym agent server (a subclass of nemo-gym's own `SimpleResponsesAPIAgent`) whose `/run`
plays one Nenyax episode against the trainer's policy and answers NeMo Gym's verify response.

NeMo RL (and the verl / miles NeMo Gym recipes) post each dataset row to an agent's `/run` and train on the
`response.output` items that carry `prompt_token_ids`, `generation_token_ids` and `generation_log_probs`, with
`reward` as the episode's reward. The policy is the trainer's OpenAI-compatible server, which NeMo Gym names in
its global config as `policy_base_url` (one URL or a list) and `policy_model_name`: this agent's config reads
them the way nemo-gym's own model-server configs do (`${policy_base_url}`).

nemo-gym needs Python >= 3.12 and pins its own openai, so it is not a dependency: it is installed where the
server runs (a NeMo Gym deployment has it). The classes are built from it on first use (`NenyaxAgent`,
`NenyaxAgentConfig`, ... are this module's attributes), and this module imports without it.
"""

import functools
import itertools
from typing import Any

from nenyax.core import Environment, load
from nenyax.core.errors import UsageError
from nenyax.trainers.nemo_gym.episode import RowError, play

NAMES = ("NenyaxAgent", "NenyaxAgentConfig", "NenyaxRunRequest", "NenyaxVerifyResponse")
SETTINGS = ("policy_model_name", "max_tokens", "temperature", "timeout", "max_retries")


@functools.cache
def classes() -> dict[str, type]:
    """The agent server's classes, subclassed from nemo-gym's (imported now)."""
    try:
        from fastapi import HTTPException
        from fastapi.responses import JSONResponse
        from pydantic import ConfigDict, PrivateAttr

        from nemo_gym.base_resources_server import BaseRunRequest, BaseVerifyResponse
        from nemo_gym.base_responses_api_agent import BaseResponsesAPIAgentConfig, SimpleResponsesAPIAgent
        from nemo_gym.openai_utils import NeMoGymResponse, NeMoGymResponseCreateParamsNonStreaming
    except ImportError as e:
        msg = f"The NeMo Gym agent server needs nemo-gym (Python >= 3.12): pip install 'nemo-gym>=0.4,<0.8' ({e})."
        raise UsageError(msg) from e

    class NenyaxAgentConfig(BaseResponsesAPIAgentConfig):
        """The agent server's config: which environment, and the trainer's policy server."""

        env: str
        """The Nenyax environment URI every row's task comes from (`reasoning_gym:basic_arithmetic?size=2`)."""
        policy_base_url: str | list[str]
        """The trainer's OpenAI-compatible base URL(s), `.../v1` (NeMo RL hands a list: one per server)."""
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
        """A `/run` body: NeMo Gym's row (`responses_create_params`, `agent_ref`, `_ng_*`) plus `nenyax_task`."""

        model_config = ConfigDict(extra="allow")

    class NenyaxVerifyResponse(BaseVerifyResponse):
        """The `/run` answer: the row echoed, `response` (a Responses API object), `reward`, and `nenyax_*`."""

        model_config = ConfigDict(extra="allow")

    class NenyaxAgent(SimpleResponsesAPIAgent):
        """Plays the row's task with `Endpoint("openai:<policy_model_name>", base_url=<policy_base_url>)`."""

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
            raise HTTPException(status_code=501, detail="Post the row to /run: it names the Nenyax task.")

        async def run(self, body: NenyaxRunRequest) -> Any:
            """Play the row's task once: a trainable episode is a verify response, a failed one an HTTP 503."""
            settings = {name: getattr(self.config, name) for name in SETTINGS}
            try:
                status, answer = await play(self.env, body.model_dump(), self._urls, settings)
            except (RowError, UsageError) as e:  # no task, or one the environment does not have: the row's fault
                raise HTTPException(status_code=422, detail=str(e)) from e
            if status != 200:
                return JSONResponse(status_code=status, content=answer)
            return NenyaxVerifyResponse.model_validate(answer)

    made = (NenyaxAgent, NenyaxAgentConfig, NenyaxRunRequest, NenyaxVerifyResponse)
    for cls in made:
        cls.__module__ = __name__
    return {cls.__name__: cls for cls in made}


def __getattr__(name: str) -> Any:
    if name in NAMES:
        return classes()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
