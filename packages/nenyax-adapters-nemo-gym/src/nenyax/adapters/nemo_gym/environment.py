"""A resources server and its dataset rows as a step environment: one row is one task.

An episode: ``POST /seed_session`` with the row (the server answers with a session cookie), then
each action is either a tool call (``POST /<tool>`` with its arguments, the output becomes the next
observation) or the final answer, after which ``POST /verify`` gets the row plus a Responses API
object holding everything the policy produced, and returns the reward.
"""

from __future__ import annotations

import json
import math
import random
import re
import string
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from nenyax.adapters.nemo_gym import rows as rowlib
from nenyax.adapters.nemo_gym.responses import function_call, function_call_output, message, response_object
from nenyax.adapters.nemo_gym.server_kind import SIMPLE
from nenyax.adapters.nemo_gym.wire import Client, Reply
from nenyax.core import (
    BadURIError,
    EnvironmentFailure,
    Judgment,
    Manifest,
    PolicyFailure,
    Session,
    Step,
    StepEnvironment,
    UnsupportedPolicyError,
    VerifierFailure,
)
from nenyax.core.toolkit.loops import LoopThread

RESERVED = frozenset({"seed_session", "close_session", "verify", "aggregate_metrics", "mcp"})
"""Routes of every resources server that are not tools (close_session since nemo-gym 0.7, which reserves it too).
A gymnasium server's tool calls travel inside ``/step``, so its routes are no tool names to refuse."""
_TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")
_TOOL_CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)
_ECHOED = ("responses_create_params", "response")
_DIAGNOSTICS = ("mask_sample", "failure_kind", "failure_reason")
"""nemo-gym 0.7's verify diagnostics: kept when set, dropped at their defaults (False, None), which say nothing."""
_MISSING = object()
REFERENCE_HINT = (
    "the server gave the reference reply (the gold in answer tags, then boxed) nothing; "
    "a server that grades the whole reply wants the gold alone: load with ?reference={gold}"
)


@attrs.frozen(kw_only=True)
class Settings:
    """How episodes of one environment run (from the URI)."""

    rows_path: Path
    split: str
    gold_field: str | None
    reference: str
    max_turns: int
    tool_errors: str
    """``fail``: a call the server rejects (4xx) is the policy's error; ``feedback``: its answer is
    returned to the policy as the tool's output, as NeMo Gym's own simple_agent does."""
    timeout: float
    protocol: str = SIMPLE
    """Which agent's protocol the server speaks: ``simple`` (simple_agent's) or ``gymnasium`` (gymnasium_agent's)."""


class NemoGymEnvironment(StepEnvironment):
    """Rows served by one resources server; task ids ``<split>/<row index>``."""

    def __init__(
        self,
        manifest: Manifest,
        url: str,
        rows: list[dict[str, Any]],
        settings: Settings,
        on_close: Any = None,
        session_class: type[NemoGymSession] | None = None,
    ) -> None:
        """`on_close` releases what loading acquired (a server this process started); `session_class` plays
        an episode (`NemoGymSession`, simple_agent's protocol, unless the adapter picked gymnasium's)."""
        super().__init__(manifest)
        self.url = url
        self.rows = rows
        self.settings = settings
        self.client = Client(url, settings.timeout)
        self._ids = [f"{settings.split}/{i}" for i in range(len(rows))]
        self._bridge = LoopThread("nenyax-nemo-gym")
        self._on_close = on_close
        self._session_class = session_class or NemoGymSession

    def task_ids(self, split: str | None = None, limit: int | None = None) -> list[str]:
        """Every row's task id, in file order."""
        if split not in (None, self.settings.split):
            msg = f"This environment serves the split {self.settings.split!r}, not {split!r}."
            raise BadURIError(msg)
        return self._ids if limit is None else self._ids[:limit]

    def _index(self, task: str | None, seed: int | None) -> int:
        if task is None:
            return 0 if seed is None else random.Random(seed).randrange(len(self.rows))
        prefix, _, index = task.rpartition("/")
        if prefix != self.settings.split or not index.isdigit() or int(index) >= len(self.rows):
            msg = (
                f"{task!r} is not a task of this environment; task ids run from {self._ids[0]!r} to {self._ids[-1]!r}."
            )
            raise BadURIError(msg)
        return int(index)

    async def asession(self, task: str | None = None, seed: int | None = None) -> NemoGymSession:
        """Seed a server session for `task` (or the row `seed` picks); a lost server is `InfraFailure`."""
        index = self._index(task, seed)
        session = self._session_class(self, index, seed)
        self.client.hold()
        try:
            await session.start()
        except BaseException:
            await self.client.release()
            raise
        return session

    def session(self, task: str | None = None, seed: int | None = None) -> NemoGymSession:
        """Synchronous `asession` (the episode's requests then run on a private loop)."""
        return self._bridge.run(self.asession(task, seed))

    def close(self) -> None:
        """Close the sync loop's connections and stop a server this environment started."""
        self._bridge.close(self.client.aclose())
        if self._on_close is not None:
            on_close, self._on_close = self._on_close, None
            on_close()


def _garbage(rng: random.Random) -> str:
    alphabet = string.ascii_lowercase + string.digits
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(6, 16)))


class NemoGymSession(Session):
    """One row's episode on the server, its session in a cookie."""

    def __init__(self, env: NemoGymEnvironment, index: int, seed: int | None) -> None:
        """Read the row; `seed` sends nothing (rows are deterministic) and is recorded."""
        self.env = env
        self.index = index
        self.seed = seed
        self.task_id = env._ids[index]
        self.row = env.rows[index]
        self.tools = rowlib.tool_specs(self.row)
        self.cookies: dict[str, str] = {}
        self.output: list[dict[str, Any]] = []
        self._observation: list[dict[str, Any]] = rowlib.input_items(self.row)
        self._turns = 0
        self._verified: dict[str, Any] | None = None
        self._reward: float | None = None
        self._answer: str | None = None
        """The final text answer, once given."""
        self._closed = False

    @property
    def where(self) -> str:
        """The server, for messages."""
        return self.env.url

    async def start(self) -> None:
        """``POST /seed_session`` with the row; keep the session cookie."""
        reply = await self.env.client.post("/seed_session", self.row, {})
        if reply.status >= 400:
            msg = f"{self.where}/seed_session refused {self.task_id} with {reply.status}: {reply.detail()}."
            raise EnvironmentFailure(msg)
        self.cookies = reply.cookies

    @property
    def observation(self) -> list[dict[str, Any]]:
        """The Responses API input items new since the last action: the prompt, then tool outputs."""
        return self._observation

    @property
    def done(self) -> bool:
        """Done once the server has judged the episode."""
        return self._reward is not None

    # ---- acting

    def _tool_call(self, action: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        name, arguments = action.get("name"), action.get("arguments", {})
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError as exc:
                msg = f"The arguments of the call to {name!r} are not JSON ({exc.msg})."
                raise PolicyFailure(msg) from exc
        if not isinstance(name, str) or not _TOOL_NAME.match(name) or name in RESERVED:
            msg = f"{name!r} is not a tool name; the row offers {[t['name'] for t in self.tools] or 'no tools'}."
            raise PolicyFailure(msg)
        if not isinstance(arguments, dict):
            msg = f"The arguments of the call to {name!r} must be a JSON object, not {type(arguments).__name__}."
            raise PolicyFailure(msg)
        return name, arguments

    async def _call(self, name: str, arguments: dict[str, Any]) -> str:
        reply = await self.env.client.post(f"/{name}", arguments, self.cookies)
        self.cookies = reply.cookies
        if reply.status < 400 or self.env.settings.tool_errors == "feedback":
            return reply.text
        if reply.status in (404, 405):
            msg = f"The server has no tool {name!r} ({reply.status}: {reply.detail()})."
            raise PolicyFailure(msg)
        if reply.status < 500:
            msg = f"The server rejected the call to {name!r} ({reply.status}): {reply.detail()}."
            raise PolicyFailure(msg)
        msg = f"The tool {name!r} failed on the server ({reply.status}): {reply.detail()}."
        raise EnvironmentFailure(msg)

    async def aact(self, action: Any) -> Step:
        """A tool call (``{"name": ..., "arguments": {...}}``) or the final answer (text, then verified)."""
        observation = self._observation
        if isinstance(action, dict):
            name, arguments = self._tool_call(action)
            output = await self._call(name, arguments)
            call_id = f"call_{self._turns}"
            self.output += [function_call(call_id, name, arguments), function_call_output(call_id, output)]
            self._observation = [self.output[-1]]
            self._turns += 1
            step_action = {"name": name, "arguments": arguments}
            if self._turns < self.env.settings.max_turns:
                return Step(observation=observation, action=step_action, info={"tool_output": output})
            # Out of turns: the server judges what was done so far, as simple_agent's max_steps does.
            reward = await self._verify()
            info = {"tool_output": output, "verify": self._verified}
            return Step(observation=observation, action=step_action, reward=reward, truncated=True, info=info)
        if action is not None and not isinstance(action, str):
            shape = "{'name': ..., 'arguments': {...}}"
            msg = f"An action is the answer text or a tool call {shape}, not {type(action).__name__}."
            raise PolicyFailure(msg)
        text = action or ""
        self._answer = text
        self.output.append(message(f"msg_{self._turns}", text))
        self._turns += 1
        reward = await self._verify()
        return Step(
            observation=observation, action=text, reward=reward, terminated=True, info={"verify": self._verified}
        )

    def act(self, action: Any) -> Step:
        """Synchronous `aact`."""
        return self.env._bridge.run(self.aact(action))

    def tool_call(self, action: Any) -> tuple[str, Any] | None:
        """A dict action is a call of the tool it names (the final answer, text, is not a tool call)."""
        if not isinstance(action, dict):
            return None
        return str(action.get("name")), action.get("arguments", {})

    def tool_result(self, step: Step) -> Any:
        """The text the server's tool route answered."""
        return step.info.get("tool_output")

    async def _verify(self) -> float:
        body = {**self.row, "response": response_object(self.output, self.tools)}
        reply = await self.env.client.post("/verify", body, self.cookies)
        reward, extras = _reward(reply, self.where, self.row)
        self._verified, self._reward = extras, reward
        return reward

    def judge(self, steps: Sequence[Step]) -> Judgment:
        """The server's reward; its other numeric fields as components."""
        if self._reward is None or self._verified is None:
            msg = "The episode ended before the server verified it."
            raise VerifierFailure(msg)
        components = {
            k: float(v)
            for k, v in self._verified.items()
            if isinstance(v, int | float) and k != "reward" and math.isfinite(float(v))
        }
        extracted = self._verified.get("extracted_answer")
        feedback = f"extracted answer: {extracted}" if extracted is not None else ""
        if self._reward <= 0 and self._is_default_reference(self._answer):
            feedback = "; ".join(filter(None, (feedback, REFERENCE_HINT)))
        return Judgment(
            score=self._reward,
            passed=self._reward >= 1.0,
            components=components,
            feedback=feedback,
            judge=f"nemo_gym:{self.env.manifest.name}/verify",
        )

    async def aclose(self) -> None:
        """Let this loop's connection pool go (once)."""
        if not self._closed:
            self._closed = True
            await self.env.client.release()

    def close(self) -> None:
        """Synchronous `aclose`."""
        self.env._bridge.run(self.aclose())

    # ---- native tool calls (`nenyax.core.ToolSession`): a trainer's own tool loop

    def tool_specs(self) -> list[dict[str, Any]]:
        """The row's function tools in the chat form (the Responses API's flat tool, nested under ``function``)."""
        return [
            {
                "type": "function",
                "function": {
                    "name": tool["name"],
                    "description": tool.get("description") or "",
                    "parameters": tool.get("parameters") or {"type": "object", "properties": {}},
                },
            }
            for tool in self.tools
        ]

    def task_text(self) -> str:
        """The row's prompt messages as one text (a system or developer message first, as the row has it)."""
        return "\n\n".join(m["content"] for m in rowlib.chat_messages(rowlib.input_items(self.row)) if m["content"])

    def tool_action(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The call ``{"name": name, "arguments": arguments}``."""
        return {"name": name, "arguments": arguments}

    def tool_reply(self, step: Step) -> str:
        """The text the server's tool route answered (or why the call was refused)."""
        output = step.info.get("tool_output")
        return str(output) if output is not None else str(step.info.get("error", "(no output)"))

    # ---- text codec

    def render(self) -> list[dict[str, Any]]:
        """The row's prompt as chat messages (with the tools and <tool_call> syntax), then each tool result."""
        messages = rowlib.chat_messages(self._observation)
        if self._turns == 0 and self.tools:
            prompt = rowlib.tool_prompt(self.tools)
            if messages and messages[0]["role"] == "system":
                messages[0] = {"role": "system", "content": messages[0]["content"] + "\n\n" + prompt}
            else:
                messages.insert(0, {"role": "system", "content": prompt})
        return messages

    def parse_action(self, text: str) -> Any:
        """A ``<tool_call>{json}</tool_call>`` in the reply is a tool call; anything else is the final answer."""
        text = super().parse_action(text)
        found = _TOOL_CALL.search(text)
        if found is None:
            return text
        try:
            call = json.loads(found.group(1))
        except json.JSONDecodeError as exc:
            msg = f"The reply's <tool_call> is not JSON ({exc.msg})."
            raise PolicyFailure(msg) from exc
        if not isinstance(call, dict):
            msg = 'The reply\'s <tool_call> must be an object {"name": ..., "arguments": {...}}.'
            raise PolicyFailure(msg)
        return call

    # ---- built-in policies

    def _is_default_reference(self, answer: str | None) -> bool:
        """Whether `answer` is the default reference template's reply for this row."""
        if answer is None or self.env.settings.reference != rowlib.DEFAULT_REFERENCE:
            return False
        try:
            return answer == self.reference_action()
        except UnsupportedPolicyError:
            return False

    def reference_action(self) -> str:
        """The row's gold answer in the reference template (answer tags and boxed by default)."""
        field = self.env.settings.gold_field
        if field is None:
            fields = ", ".join(rowlib.GOLD_FIELDS)
            msg = f"The rows of {self.env.uri} hold no gold answer ({fields}), so there is no reference."
            raise UnsupportedPolicyError(msg)
        return self.env.settings.reference.replace("{gold}", rowlib.gold_answer(self.row, field))

    def null_action(self) -> str:
        """An empty answer."""
        return ""

    def random_action(self, rng: random.Random) -> str:
        """A garbage answer: random letters and digits."""
        return _garbage(rng)


def _reward(reply: Reply, where: str, row: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    """The reward in a ``/verify`` reply, and its fields that do not just echo the request."""
    if reply.status >= 400:
        msg = f"{where}/verify failed with {reply.status}: {reply.detail()}."
        raise VerifierFailure(msg)
    try:
        data = reply.json()
    except ValueError as exc:
        msg = f"{where}/verify answered with a body that is not JSON: {reply.text[:120]!r}."
        raise VerifierFailure(msg) from exc
    reward = data.get("reward") if isinstance(data, dict) else None
    if isinstance(reward, bool) or not isinstance(reward, int | float):
        msg = f"{where}/verify answered without a numeric reward (reward={reward!r})."
        raise VerifierFailure(msg)
    if not math.isfinite(reward):
        msg = f"{where}/verify returned the non-finite reward {reward!r}, which is never a score."
        raise VerifierFailure(msg)
    if data.get("mask_sample") is True:  # nemo-gym 0.7: the environment failed, not the policy
        kind, reason = data.get("failure_kind"), data.get("failure_reason")
        why = ", ".join(f"{k} {v!r}" for k, v in (("failure_kind", kind), ("failure_reason", reason)) if v)
        msg = (
            f"{where}/verify masked the sample{f' ({why})' if why else ''}: "
            f"its reward {reward!r} is not a measurement of the policy."
        )
        raise VerifierFailure(msg)
    return float(reward), {
        k: v
        for k, v in data.items()
        if k not in _ECHOED and row.get(k, _MISSING) != v and not (k in _DIAGNOSTICS and not v)
    }
