"""Build and run the agent server outside a NeMo Gym deployment, and write the dataset rows it plays.

nemo-gym's `run_webserver` reads the server's config from a Hydra global config and starts Ray; `agent_server`
builds the same server object from plain arguments instead (its `ServerClient` knows only this server), and
`app_of` wires the FastAPI app as `run_webserver` does (routes, liveness, exception middleware).
"""

from __future__ import annotations

from typing import Any

from nenyax.core import Environment, load, task_rows
from nenyax.trainers.nemo_gym.agent import classes
from nenyax.trainers.nemo_gym.episode import SEED_KEY, TASK_KEY

NAME = "nenyax_agent"
"""The server's default instance name: the `agent_ref.name` its rows carry."""
ROLES = frozenset({"user", "assistant", "system", "developer"})


def agent_server(
    env: str | Environment,
    policy_base_url: str | list[str],
    policy_model_name: str,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    name: str = NAME,
    **settings: Any,
) -> Any:
    """A `NenyaxAgent` serving `env` (a URI or a loaded environment) against the policy server."""
    from omegaconf import OmegaConf

    from nemo_gym.server_utils import BaseServerConfig, ServerClient

    made = classes()
    uri = env if isinstance(env, str) else env.uri
    config = made["NenyaxAgentConfig"](
        name=name,
        host=host,
        port=port,
        entrypoint="app.py",
        env=uri,
        policy_base_url=policy_base_url,
        policy_model_name=policy_model_name,
        **settings,
    )
    instance = {name: {"responses_api_agents": {NAME: config.model_dump(exclude={"name"})}}}
    client = ServerClient(
        head_server_config=BaseServerConfig(host=host, port=port), global_config_dict=OmegaConf.create(instance)
    )
    return made["NenyaxAgent"](config=config, server_client=client, environment=None if isinstance(env, str) else env)


def app_of(agent: Any) -> Any:
    """The agent's FastAPI app, set up as nemo-gym's `run_webserver` sets up a server's."""
    app = agent.setup_webserver()
    agent.setup_liveness(app)
    agent.setup_exception_middleware(app)
    return app


def rows(
    env: str | Environment,
    *,
    agent_name: str = NAME,
    split: str | None = None,
    limit: int | None = None,
    seed: int | None = None,
) -> list[dict[str, Any]]:
    """NeMo Gym dataset rows, one per task: the prompt as `responses_create_params.input`, the task id, the agent."""
    environment = load(env) if isinstance(env, str) else env
    out = []
    for row in task_rows(environment, split=split, limit=limit):
        shown = [
            {"role": m["role"], "content": m["content"]}
            for m in row["prompt"] or ()
            if m.get("role") in ROLES and isinstance(m.get("content"), str)
        ]
        task = row["task_id"]
        out.append(
            {
                "responses_create_params": {"input": shown or f"Nenyax task {task}"},
                TASK_KEY: task,
                **({SEED_KEY: seed} if seed is not None else {}),
                "agent_ref": {"type": "responses_api_agents", "name": agent_name},
            }
        )
    return out
