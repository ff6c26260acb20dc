"""OpenEnv's own client (openenv 0.10) plays full episodes against the served environments, unchanged."""

import asyncio
import subprocess
import sys
from pathlib import Path

import orjson
import requests
from openenv.core import EnvClient, GenericEnvClient
from openenv.core.client_types import StepResult
from openenv.core.env_server.types import Action, State
from openenv.core.mcp_client import MCPToolClient

from nenyax.core import load

ARITHMETIC = "reasoning_gym:basic_arithmetic?size=20&seed=7"


def _gold(task_id):
    env = load(ARITHMETIC)
    try:
        return env.session(task=task_id).reference_action()
    finally:
        env.close()


def test_reasoning_gym_episode_carries_the_judgment(arithmetic):
    with GenericEnvClient(base_url=arithmetic.url).sync() as client:
        first = client.reset(task_id="basic_arithmetic/7/3")
        assert first.done is False
        assert first.reward is None
        obs = first.observation
        assert obs["task_id"] == "basic_arithmetic/7/3"
        assert isinstance(obs["observation"], str)
        assert obs["observation"] in obs["messages"][-1]["content"]
        assert [m["role"] for m in obs["messages"]] == ["system", "user"]  # the env's own chat prompt
        result = client.step({"message": _gold(obs["task_id"])})
        judgment = result.metadata["judgment"]
        assert result.done is True
        assert judgment["score"] == 1.0
        assert judgment["passed"] is True
        assert judgment["judge"] == "reasoning_gym:basic_arithmetic"
        assert result.reward == judgment["score"]
        assert result.metadata["status"] == "ok"
        assert client.state()["step_count"] == 1

        client.reset(task_id="basic_arithmetic/7/3")
        wrong = client.step({"message": "<answer>not a number</answer>"})
        assert wrong.metadata["judgment"]["score"] == 0.0
        assert wrong.reward == 0.0
        assert wrong.metadata["judgment"]["passed"] is False
        assert "expected" in wrong.metadata["judgment"]["feedback"]


def test_reset_by_seed_and_by_split_index_is_replayable(arithmetic):
    with GenericEnvClient(base_url=arithmetic.url).sync() as client:
        by_seed = [client.reset(seed=11).observation["observation"] for _ in range(2)]
        assert by_seed[0] == by_seed[1]
        by_index = client.reset(split="all", index=5).observation
        assert by_index["task_id"] == "basic_arithmetic/7/5"


class CartPoleAction(Action):
    action: int


class CartPoleClient(EnvClient[CartPoleAction, dict, State]):
    """A typed OpenEnv client, written the way OpenEnv's environment packages write theirs."""

    def _step_payload(self, action):
        return action.model_dump(exclude={"metadata"})

    def _parse_result(self, payload):
        return StepResult(
            observation=payload["observation"],
            reward=payload.get("reward"),
            done=payload.get("done", False),
            metadata=payload.get("metadata"),
        )

    def _parse_state(self, payload):
        return State(**payload)


def _play_cartpole(url, seed):
    with CartPoleClient(base_url=url).sync() as client:
        result = client.reset(seed=seed)
        observations, rewards = [result.observation["observation"]], []
        t = 0
        while not result.done:
            result = client.step(CartPoleAction(action=t % 2))
            observations.append(result.observation["observation"])
            rewards.append(result.reward)
            t += 1
        state = client.state()
    return observations, rewards, result, state


def test_gymnasium_cartpole_episode_with_a_typed_env_client(cartpole):
    observations, rewards, final, state = _play_cartpole(cartpole.url, seed=4)
    judgment = final.metadata["judgment"]
    steps = len(rewards)
    assert judgment["score"] == float(steps) == judgment["components"]["return"]
    assert final.reward == judgment["score"]  # the final reward is the judgment's score
    assert rewards[:-1] == [1.0] * (steps - 1)
    assert final.metadata["step_reward"] == 1.0
    assert final.metadata["terminated"] is True
    assert final.metadata["status"] == "ok"
    assert len(observations[0]) == 4
    assert state.step_count == steps
    assert state.episode_id
    again = _play_cartpole(cartpole.url, seed=4)
    assert again[0] == observations  # the same seed and actions replay the same episode


def test_async_generic_client_and_native_action_rejected_by_the_env(cartpole):
    async def play():
        async with GenericEnvClient(base_url=cartpole.url) as client:
            await client.reset(seed=1)
            return await client.step({"action": 7})  # outside Discrete(2): the policy's failure

    result = asyncio.run(play())
    assert result.done is True
    assert result.reward == 0.0
    assert result.metadata["status"] == "policy_error"
    assert result.metadata["judgment"] == {
        "score": 0.0,
        "passed": False,
        "components": {},
        "feedback": result.metadata["error"],
        "judge": "nenyax:policy_error",
    }
    assert "not in the action space" in result.metadata["error"]


def test_text_codec_reply_is_parsed_by_the_env(cartpole):
    with GenericEnvClient(base_url=cartpole.url).sync() as client:
        client.reset(seed=2)
        moved = client.step({"message": "I push right. <action>1</action>"})
        assert moved.done is False
        assert moved.reward == 1.0
        garbled = client.step({"message": "no idea"})
        assert garbled.done is True
        assert garbled.metadata["status"] == "policy_error"


def test_schema_metadata_health_and_stateless_http(cartpole, arithmetic):
    schema = requests.get(f"{cartpole.url}/schema", timeout=10).json()
    assert set(schema) == {"action", "observation", "state", "reset_observation"}
    assert schema["action"]["properties"]["action"] == {
        "description": schema["action"]["properties"]["action"]["description"],
        "title": "Action",
        "type": "integer",
        "minimum": 0,
        "maximum": 1,
    }
    assert requests.get(f"{cartpole.url}/health", timeout=10).json() == {"status": "healthy"}
    meta = requests.get(f"{cartpole.url}/metadata", timeout=10).json()
    assert meta["name"] == "CartPole-v1"
    assert meta["description"]
    assert requests.get(f"{cartpole.url}/state", timeout=10).json()["step_count"] == 0

    reset = requests.post(f"{arithmetic.url}/reset", json={"seed": 3}, timeout=10).json()
    assert set(reset) == {"observation", "reward", "done", "metadata"}
    assert reset["done"] is False
    task = reset["observation"]["task_id"]
    # One stateless /step is a whole judged episode of a single-turn environment.
    step = requests.post(
        f"{arithmetic.url}/step", json={"action": {"message": _gold(task)}, "task_id": task}, timeout=10
    ).json()
    assert step["done"] is True
    assert step["reward"] == 1.0 == step["metadata"]["judgment"]["score"]
    bad = requests.post(f"{arithmetic.url}/reset", json={"seed": -1}, timeout=10)
    assert bad.status_code == 422
    assert bad.json()["detail"][0]["loc"] == ["body", "seed"]
    missing = requests.post(f"{arithmetic.url}/step", json={}, timeout=10)
    assert missing.status_code == 422
    assert missing.json()["detail"][0]["type"] == "missing"
    garbage = requests.post(f"{arithmetic.url}/step", data=b"{nope", timeout=10)
    assert garbage.status_code == 422
    assert garbage.json()["detail"][0]["type"] == "json_invalid"


def test_task_api(arithmetic):
    url = arithmetic.url
    assert requests.get(f"{url}/list_environments", timeout=10).json() == ["basic_arithmetic"]
    assert requests.get(f"{url}/basic_arithmetic/splits", timeout=10).json() == [
        {"name": "all", "type": "validation", "count": 20}
    ]
    assert requests.post(f"{url}/basic_arithmetic/num_tasks", json={"split": "all"}, timeout=10).json() == {
        "num_tasks": 20
    }
    tasks = requests.post(f"{url}/basic_arithmetic/tasks", json={"split": "all"}, timeout=10).json()["tasks"]
    assert len(tasks) == 20
    assert tasks[2] == {"id": "basic_arithmetic/7/2", "index": 2}
    one = requests.post(f"{url}/basic_arithmetic/task", json={"split": "all", "index": 2}, timeout=10).json()
    assert one == {"task": tasks[2]}
    assert (
        requests.post(f"{url}/basic_arithmetic/task", json={"split": "all", "index": 99}, timeout=10).status_code == 400
    )
    assert requests.get(f"{url}/other/splits", timeout=10).status_code == 404
    assert requests.post(f"{url}/basic_arithmetic/tasks", json={"split": "nope"}, timeout=10).status_code == 404


def _rpc(url, method, params=None, rid=1):
    body = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}}
    return requests.post(f"{url}/mcp", json=body, timeout=10).json()


def test_mcp_tools_over_http(arithmetic):
    url = arithmetic.url
    tools = _rpc(url, "tools/list")["result"]["tools"]
    assert [t["name"] for t in tools] == ["observe", "act"]
    assert tools[1]["inputSchema"]["required"] == ["message"]
    # Without a session, a call is an episode of its own: the default task, one answer, judged.
    first = _rpc(url, "tools/call", {"name": "observe"})["result"]["structuredContent"]
    gold = _gold(first["observation"]["task_id"])
    done = _rpc(url, "tools/call", {"name": "act", "arguments": {"message": gold}})["result"]
    assert done["isError"] is False
    assert orjson.loads(done["content"][0]["text"]) == done["structuredContent"]
    assert done["structuredContent"]["metadata"]["judgment"]["score"] == 1.0

    session = _rpc(url, "openenv/session/create")["result"]["session_id"]
    seen = _rpc(url, "tools/call", {"name": "observe", "session_id": session})["result"]["structuredContent"]
    assert seen["observation"]["task_id"] == first["observation"]["task_id"]
    bad = _rpc(url, "tools/call", {"name": "act", "arguments": {"answer": 1}, "session_id": session})
    assert bad["error"]["code"] == -32602
    _rpc(url, "tools/call", {"name": "act", "arguments": {"message": "3"}, "session_id": session})
    over = _rpc(url, "tools/call", {"name": "act", "arguments": {"message": "3"}, "session_id": session})
    assert "episode is over" in over["error"]["message"]
    assert _rpc(url, "openenv/session/close", {"session_id": session})["result"] == {
        "session_id": session,
        "closed": True,
    }
    assert _rpc(url, "tools/call", {"name": "observe", "session_id": session})["error"]["code"] == -32602
    assert _rpc(url, "nope")["error"] == {"code": -32601, "message": "Method not found: nope", "data": None}
    assert requests.post(f"{url}/mcp", data=b"{", timeout=10).json()["error"]["code"] == -32700
    assert _rpc(url, "tools/call", {"name": "jump"})["error"]["message"] == "Tool not found: jump"


def test_openenv_mcp_tool_client(cartpole):
    # Production mode: an MCP session over HTTP, the WebSocket attached to it with ?session_id=.
    async def play():
        async with MCPToolClient(base_url=cartpole.url) as client:
            await client.reset(seed=5)
            names = [tool.name for tool in await client.list_tools()]
            result = await client.call_tool("act", action=1)
            state = await client.state()
            return names, result, state

    names, result, state = asyncio.run(play())
    assert names == ["observe", "act"]
    assert result["reward"] == 1.0
    assert result["observation"]["step"] == 1
    assert state.step_count == 1  # the tool call and the WebSocket drove one episode
    assert cartpole.sessions() == 0  # the client closed its MCP session


def test_mcp_style_step_actions_over_ws(cartpole):
    with GenericEnvClient(base_url=cartpole.url).sync() as client:
        client.reset(seed=5)
        listed = client.step({"type": "list_tools"})
        assert [t["name"] for t in listed.observation["tools"]] == ["observe", "act"]
        called = client.step({"type": "call_tool", "tool_name": "act", "arguments": {"action": 0}})
        assert called.observation["tool_name"] == "act"
        assert called.reward == 1.0
        assert called.observation["result"]["observation"]["step"] == 1
        missing = client.step({"type": "call_tool", "tool_name": "jump", "arguments": {}})
        assert missing.observation["error"]["error_type"] == "tool_not_found"


def test_openenv_validate_passes(cartpole):
    exe = Path(sys.executable).with_name("openenv")
    report = subprocess.run(
        [str(exe), "validate", "--url", cartpole.url, "--json"], capture_output=True, text=True, timeout=120
    )
    assert report.returncode == 0, report.stdout + report.stderr
    data = orjson.loads(report.stdout[report.stdout.index("{") :])
    assert data["passed"] is True
    assert data["standard_profile"] == "openenv-http/1.x"
    assert data["mode"] == "simulation"
    assert {c["id"] for c in data["criteria"] if c["passed"]} == {
        "openapi_version_available",
        "health_endpoint",
        "metadata_endpoint",
        "schema_endpoint",
        "mcp_endpoint",
        "mode_endpoint_consistency",
    }


def test_openapi_lists_the_routes(arithmetic, cartpole):
    for served in (arithmetic, cartpole):
        doc = requests.get(f"{served.url}/openapi.json", timeout=10).json()
        assert doc["info"]["version"] == "1.0.0"
        assert {"/reset", "/step", "/state", "/schema", "/metadata", "/health", "/mcp"} <= set(doc["paths"])
        assert (
            doc["components"]["schemas"]["Action"] == requests.get(f"{served.url}/schema", timeout=10).json()["action"]
        )
