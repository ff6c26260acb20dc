"""One ORS episode: a server session created on a task, driven by tool calls, deleted on close."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import string
import uuid
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from nenyax.adapters.ors import codec
from nenyax.adapters.ors.results import Output, read_output
from nenyax.adapters.ors.wire import Client, Refused, new_http
from nenyax.core import (
    EnvironmentFailure,
    InfraFailure,
    Judgment,
    PolicyFailure,
    Session,
    Step,
    UnsupportedPolicyError,
)
from nenyax.core.toolkit.loops import run_sync

if TYPE_CHECKING:
    import aiohttp

    from nenyax.adapters.ors.environment import OrsEnvironment

_GONE = (404, 410)
"""Statuses of a session the server no longer holds (restarted, deleted, or reaped after 900 s idle)."""


def garbage(rng: random.Random) -> str:
    """A random string of letters and digits: the random policy's answer."""
    alphabet = string.ascii_lowercase + string.digits
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(6, 16)))


async def _new_sid(client: Client) -> str:
    """A session id from ``/create_session``, as the reference client gets one; a server without it gets our own."""
    try:
        sid, _data = await client.stream("/create_session", {}, sid=None, what="creating a session id")
    except Refused as exc:
        if exc.status not in (404, 405):
            raise
        sid = None
    return sid or uuid.uuid4().hex


class OrsSession(Session):
    """An episode on one task; actions are tool calls ``{"name": ..., "input": {...}}``."""

    def __init__(self, env: OrsEnvironment, split: str, index: int, sid: str, prompt: list[Any], tools: list[Any]):
        """Wrap a created server session (use `open`)."""
        self.env = env
        self.split, self.index, self.sid = split, index, sid
        self.task_id = f"{split}/{index}"
        self.seed = None  # ORS has no seeds: the task alone fixes the start
        self.prompt = prompt
        self.tools = tools
        self._observation: dict[str, Any] = {"prompt": prompt}
        self._last: tuple[str, Output] | None = None
        self._done = False
        self._rendered = False
        self._closed = False
        self._http: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    async def open(cls, env: OrsEnvironment, split: str, index: int, *, lease: bool) -> OrsSession:
        """Create a server session on task `index` of `split`; `lease` holds this loop's connections until closed."""
        http = env.connections.acquire() if lease else new_http()
        client = Client(env.base_url, http)
        name, task = env.info.env, f"{split}/{index}"
        sid: str | None = None
        created = False
        try:
            sid = await _new_sid(client)
            await client.request("POST", "/create", {"env_name": name, "split": split, "index": index}, sid=sid)
            created = True
            prompt = await client.request("GET", f"/{name}/prompt", sid=sid)
            tools = await _session_tools(client, env, sid)
            if not isinstance(prompt, list):
                msg = f"The ORS server at {env.base_url} sent a prompt for {task} that is not a list of blocks."
                raise EnvironmentFailure(msg)
        except BaseException as exc:
            if created:
                with contextlib.suppress(Exception):
                    await client.request("POST", "/delete", sid=sid)
            await (env.connections.release() if lease else http.close())
            if isinstance(exc, Refused):
                msg = f"The ORS server at {env.base_url} could not start task {task} of {name}: {exc.detail}."
                raise EnvironmentFailure(msg) from exc
            raise
        session = cls(env, split, index, sid, prompt, tools)
        if lease:
            session._http, session._loop = http, asyncio.get_running_loop()
        else:
            await http.close()
        return session

    @contextlib.asynccontextmanager
    async def _client(self) -> AsyncIterator[Client]:
        if self._http is not None and self._loop is asyncio.get_running_loop() and not self._http.closed:
            yield Client(self.env.base_url, self._http)
            return
        async with new_http() as http:  # a synchronous call runs on a loop of its own
            yield Client(self.env.base_url, http)

    @property
    def observation(self) -> dict[str, Any]:
        """``{"prompt": blocks}`` at the start, then ``{"tool", "blocks", "metadata"}`` of the last call."""
        return self._observation

    @property
    def done(self) -> bool:
        """True once a tool returned ``finished``."""
        return self._done

    # ---- acting

    def _checked(self, action: Any) -> dict[str, Any]:
        if not isinstance(action, dict) or not isinstance(action.get("name"), str) or not action["name"]:
            msg = f"An ORS action is a tool call {{'name': <tool>, 'input': {{...}}}}, not {action!r:.80}."
            raise PolicyFailure(msg)
        arguments = action.get("input", action.get("arguments", {}))
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            msg = f"The input of the call to {action['name']!r} must be an object, not {type(arguments).__name__}."
            raise PolicyFailure(msg)
        try:
            json.dumps(arguments, allow_nan=False)
        except (TypeError, ValueError) as exc:
            msg = f"The input of the call to {action['name']!r} is not JSON ({exc})."
            raise PolicyFailure(msg) from exc
        return {"name": action["name"], "input": arguments}

    async def aact(self, action: Any) -> Step:
        """Call the tool `action` names; the server's refusal is the policy's failure, with its message."""
        call = self._checked(action)
        what = f"the call to {call['name']!r}"
        env = self.env
        async with self._client() as client:
            try:
                _task, data = await client.stream(f"/{env.info.env}/call", call, sid=self.sid, what=what)
            except Refused as exc:
                if exc.status in _GONE:
                    msg = (
                        f"The ORS server at {env.base_url} no longer holds this episode's session ({exc.detail}): "
                        "it restarted, or reaped the session after 900 s without a request."
                    )
                    raise InfraFailure(msg) from exc
                if exc.status == 422:
                    raise PolicyFailure(f"The ORS server rejected {what}: {exc.detail}.") from exc
                msg = f"The ORS server at {env.base_url} failed {what} with HTTP {exc.status}: {exc.detail}."
                raise EnvironmentFailure(msg) from exc
        output = read_output(data, base_url=env.base_url, what=what)
        step = Step(
            observation=self._observation,
            action=call,
            reward=output.reward or 0.0,
            terminated=output.finished,
            info={"output": output.as_json()},
        )
        self._observation = {"tool": call["name"], "blocks": output.blocks, "metadata": output.metadata}
        self._last = (call["name"], output)
        self._done = output.finished
        return step

    def act(self, action: Any) -> Step:
        """Synchronous `aact`."""
        return run_sync(self.aact(action))

    def tool_call(self, action: Any) -> tuple[str, Any] | None:
        """Every ORS action is a tool call: its name and input (a malformed one is `act`'s to refuse)."""
        if not isinstance(action, dict) or not isinstance(action.get("name"), str):
            return None
        return action["name"], action.get("input", action.get("arguments", {}))

    def tool_result(self, step: Step) -> Any:
        """The tool's output: its blocks, metadata, reward and whether it finished the episode."""
        return step.info.get("output")

    async def aclose(self) -> None:
        """Delete the server session and give the connections back."""
        if self._closed:
            return
        self._closed = True
        try:
            async with self._client() as client:
                await client.request("POST", "/delete", sid=self.sid)
        except Refused:
            pass  # the server no longer holds it: nothing left to delete
        finally:
            if self._http is not None:
                await self.env.connections.release()
                self._http = None

    def close(self) -> None:
        """Synchronous `aclose`."""
        run_sync(self.aclose())

    def judge(self, steps: Sequence[Step]) -> Judgment:
        """The sum of the calls' rewards; feedback quotes the last result."""
        episode_return = float(sum(step.reward for step in steps))
        finished = bool(steps) and steps[-1].terminated
        ended = "finished" if finished else "not finished"
        feedback = f"{ended} after {len(steps)} call(s), return {episode_return:g}"
        if self._last is not None:
            feedback += f"; {self._last[0]} said: {codec.blocks_text(self._last[1].blocks)[:300]}"
        return Judgment(
            score=episode_return,
            passed=None,
            components={"return": episode_return, "calls": float(len(steps)), "finished": float(finished)},
            feedback=feedback,
            judge=f"ors:{self.env.info.env}",
        )

    # ---- text codec

    def render(self) -> list[dict[str, Any]]:
        """The tools and the prompt on the first turn; afterwards the last call's result."""
        if not self._rendered:
            self._rendered = True
            system = codec.system_prompt(self.env.info.env, self.tools, self.env.plain_reply)
            prompt = codec.blocks_text(self.prompt)
            return [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
        assert self._last is not None, "render() after the first turn follows a call"
        name, output = self._last
        return [{"role": "user", "content": codec.result_message(name, output.blocks, output.reward)}]

    def parse_action(self, text: str) -> dict[str, Any]:
        """The tool call in the model's reply (a plain reply goes to the terminal tool, where there is one)."""
        names = [str(t.get("name")) for t in self.tools if isinstance(t, dict)]
        return codec.parse_reply(text, names, self.env.plain_reply)

    # ---- native tool calls (`nenyax.core.ToolSession`): a trainer's own tool loop

    def tool_specs(self) -> list[dict[str, Any]]:
        """This session's tools as OpenAI function tools (ORS's ``input_schema`` is their ``parameters``)."""
        specs = []
        for tool in self.tools:
            schema = tool.get("input_schema") if isinstance(tool.get("input_schema"), dict) else None
            parameters = schema or {"type": "object", "properties": {}}
            function = {"name": str(tool.get("name")), "description": str(tool.get("description") or "")}
            specs.append({"type": "function", "function": {**function, "parameters": parameters}})
        return specs

    def task_text(self) -> str:
        """The task's prompt blocks as text."""
        return codec.blocks_text(self.prompt)

    def tool_action(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The call ``{"name": name, "input": arguments}``."""
        return {"name": name, "input": arguments}

    def tool_reply(self, step: Step) -> str:
        """The call's result blocks as text (its reward is the judgment's, not the model's to read)."""
        output = step.info.get("output")
        if not isinstance(output, dict):  # the server refused the call: the loop recorded why
            return str(step.info.get("error", "(no output)"))
        return codec.blocks_text(output.get("blocks") or ()) or "(no output)"

    # ---- built-in policies

    def _answer_call(self, answer: Any) -> dict[str, Any]:
        tool = self.env.answers.tool
        if tool is None:
            raise UnsupportedPolicyError(self.env.answers.why_not)
        return {"name": tool.name, "input": {} if tool.arg is None else {tool.arg: answer}}

    def reference_action(self) -> dict[str, Any]:
        """The answer tool called with the task's gold answer."""
        answers = self.env.answers
        if not answers.reference or answers.key is None:
            raise UnsupportedPolicyError(f"{self.env.info.env} has no reference policy: {answers.why_not}")
        gold = self.env.task_spec(self.split, self.index)[answers.key]
        return self._answer_call(gold if isinstance(gold, str) else json.dumps(gold))

    def null_action(self) -> dict[str, Any]:
        """The answer tool called with an empty answer."""
        return self._answer_call("")

    def random_action(self, rng: random.Random) -> dict[str, Any]:
        """The answer tool called with garbage letters and digits."""
        return self._answer_call(garbage(rng))


async def _session_tools(client: Client, env: OrsEnvironment, sid: str) -> list[Any]:
    """This session's tools (shared and task-specific); servers without ``/task_tools`` have the class's only."""
    try:
        body = await client.request("GET", f"/{env.info.env}/task_tools", sid=sid)
    except Refused as exc:
        if exc.status != 404:
            raise
        return [dict(t) for t in env.info.tools]
    tools = body.get("tools") if isinstance(body, dict) else None
    return [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else [dict(t) for t in env.info.tools]
