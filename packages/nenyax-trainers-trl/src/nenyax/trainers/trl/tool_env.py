"""A Nenyax step environment with tools as TRL's ``environment_factory``: TRL's own tool loop plays it.

TRL makes one object per rollout and probes its class once: `reset` starts an episode, each public method
is a tool the model may call (its schema read from the method's signature and Google docstring), and the
episode's reward comes from `NenyaxSpec.reward_funcs`. Here the class is generated from the environment's
tool schemas (`ToolSession.tool_specs`); every method relays its call to a Nenyax episode played by the
ordinary step loop on a private event loop (`_Relay` is that episode's policy), so each episode is recorded,
judged and streamed to the run directory exactly as `nenyax run` would.

TRL never hands the environment the model's last reply (a reply without a tool call ends its loop): the
reward function does, and the episode plays it as Nenyax's own loop would (`Session.parse_action`: a
terminal tool's answer, or the policy's error), then is judged.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import keyword
import types
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from nenyax.core import PolicyFailure, PolicyInfo, StepTaken, ToolSession, Trajectory
from nenyax.core.errors import UsageError

if TYPE_CHECKING:
    from nenyax.trainers.trl.spec import NenyaxSpec

RESERVED = ("reset", "get_reward")
"""Method names TRL gives a meaning of its own: no tool may take them."""

_JSON_TYPES: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool, "object": dict}


class _Reply:
    """The model's last reply, to be played as Nenyax's loop plays a reply (None: its turn ended mid-call)."""

    def __init__(self, text: str | None) -> None:
        self.text = text


class _Relay:
    """The policy of one episode: each action is a tool call TRL's loop made (or its last reply)."""

    speaks_text = False

    def __init__(self, info: PolicyInfo) -> None:
        self.info = info
        self.session: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.actions: asyncio.Queue[Any] = asyncio.Queue()
        self.answer: asyncio.Future[str] | None = None

    async def act(self, turn: Any) -> Any:
        if not self.session.done():
            self.session.set_result(turn.session)
        action = await self.actions.get()
        if not isinstance(action, _Reply):
            return action
        if action.text is None:
            msg = "The trainer's tool loop stopped (its tool-call or token limit) before the episode ended."
            raise PolicyFailure(msg)
        return turn.session.parse_action(action.text)

    def on_step(self, event: StepTaken) -> None:
        """A call was played: what it answered is the pending tool call's result."""
        if self.answer is not None and not self.answer.done() and self.session.done():
            self.answer.set_result(self.session.result().tool_reply(event.step))


class Episode:
    """One episode in progress on the spec's loop: opened by `reset`, driven by the tool methods."""

    def __init__(self, relay: _Relay, played: asyncio.Task[Trajectory], tools: frozenset[str]) -> None:
        self.relay, self.played, self.tools = relay, played, tools
        self._lock = asyncio.Lock()  # one call at a time, even when the model makes several in one reply

    async def opened(self) -> str:
        """The task's text once the session is open, or why it could not be."""
        await asyncio.wait({self.relay.session, self.played}, return_when=asyncio.FIRST_COMPLETED)
        if not self.relay.session.done():
            trajectory = self.played.result()
            return f"The environment could not start this task ({trajectory.status.value}: {trajectory.error})."
        session = self.relay.session.result()
        if not isinstance(session, ToolSession):
            await self.end(None)
            msg = f"{type(session).__name__} does not offer its tools as function schemas (nenyax.core.ToolSession)."
            raise UsageError(msg)
        names = frozenset(spec["function"]["name"] for spec in session.tool_specs())
        if names != self.tools:
            await self.end(None)
            task = getattr(session, "task_id", "?")
            msg = (
                f"Task {task} offers the tools {sorted(names)}, not {sorted(self.tools)}: TRL's "
                "environment_factory gives every episode the same tools, so train on tasks that share them."
            )
            raise UsageError(msg)
        return session.task_text()

    async def call(self, name: str, arguments: dict[str, Any]) -> str:
        """Play the call; its answer as text (an error TRL shows the model where the episode is over)."""
        async with self._lock:
            if self.played.done() or not self.relay.session.done():
                raise RuntimeError(self._over())
            answer: asyncio.Future[str] = asyncio.get_running_loop().create_future()
            self.relay.answer = answer
            self.relay.actions.put_nowait(self.relay.session.result().tool_action(name, arguments))
            waited: set[asyncio.Future[Any]] = {answer, self.played}
            await asyncio.wait(waited, return_when=asyncio.FIRST_COMPLETED)
            if not answer.done():
                raise RuntimeError(self._over())
            return answer.result()

    async def end(self, reply: str | None) -> Trajectory:
        """Play the model's last reply where the episode is still open; the judged trajectory."""
        if not self.played.done():
            self.relay.actions.put_nowait(_Reply(reply))
        return await self.played

    def _over(self) -> str:
        if not self.played.done():
            return "The episode has not started."
        trajectory = self.played.result()
        why = f": {trajectory.error}" if trajectory.error else ""
        return f"The episode is over ({trajectory.status.value}{why}); no tool can be called."


class ToolEnvironment:
    """The base of the generated class: `reset` and the episode's plumbing (no public method but `reset`)."""

    _spec: NenyaxSpec
    _tool_names: frozenset[str]

    def __init__(self) -> None:
        self._episode: Episode | None = None

    def reset(self, task_id: str | None = None, **_: Any) -> str:
        """Start an episode of the row's task (ending this object's last one); the task's text."""
        if self._episode is not None:
            self._spec.loop.run(self._episode.end(None))
        if task_id is None:
            msg = "A row TRL handed to reset() has no task_id; train environment_factory on NenyaxSpec.tool_dataset."
            raise UsageError(msg)
        self._episode = self._spec.loop.run(self._spec.open_episode(task_id, self._tool_names))
        return self._spec.loop.run(self._episode.opened())

    async def _call(self, name: str, arguments: dict[str, Any]) -> str:
        if self._episode is None:
            raise RuntimeError("No episode is open: TRL calls reset() first.")
        return await asyncio.wrap_future(self._spec.loop.submit(self._episode.call(name, arguments)))

    def _take(self) -> Episode | None:
        """The episode in progress, which the caller ends (None when none was started)."""
        episode, self._episode = self._episode, None
        return episode


def environment_class(spec: NenyaxSpec, tools: list[dict[str, Any]], name: str) -> type[ToolEnvironment]:
    """A `ToolEnvironment` subclass with one async method per tool of `tools` (OpenAI function tools)."""
    methods: dict[str, Any] = {}
    for tool in tools:
        function = tool["function"]
        tool_name = str(function["name"])
        if tool_name in RESERVED or tool_name.startswith("_") or not tool_name.isidentifier():
            msg = (
                f"The tool {tool_name!r} cannot be a method of TRL's environment (TRL reserves reset and get_reward, "
                "hides names starting with _, and calls methods by name)."
            )
            raise UsageError(msg)
        methods[tool_name] = _method(tool_name, function.get("description") or "", function.get("parameters") or {})
    namespace = {**methods, "_spec": spec, "_tool_names": frozenset(methods), "__module__": __name__}
    return type(name, (ToolEnvironment,), namespace)


def _method(name: str, description: str, parameters: dict[str, Any]) -> Callable[..., Any]:
    """An async method calling tool `name`, whose signature and docstring say its JSON schema (TRL renders the
    tool from them with transformers' `get_json_schema`)."""

    async def call(self: ToolEnvironment, **arguments: Any) -> str:
        return await self._call(name, arguments)

    required = set(parameters.get("required") or ())
    signature = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {"return": str}
    described = []
    for argument, schema in (parameters.get("properties") or {}).items():
        if not argument.isidentifier() or keyword.iskeyword(argument):
            msg = f"The tool {name!r} takes an argument {argument!r}, which cannot be a Python parameter's name."
            raise UsageError(msg)
        schema = schema if isinstance(schema, dict) else {}
        hint = _hint(schema)
        default: Any = inspect.Parameter.empty
        if argument not in required:
            hint, default = hint | None, None
        annotations[argument] = hint
        signature.append(inspect.Parameter(argument, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=hint))
        said = " ".join(str(schema.get("description") or schema.get("title") or argument).split())
        if isinstance(schema.get("enum"), list):
            said += f" (choices: {_json(schema['enum'])})"
        described.append(f"    {argument}: {said}")
    summary = " ".join(description.split()) or f"Call the tool {name}."
    call.__doc__ = summary + ("\n\nArgs:\n" + "\n".join(described) if described else "")
    call.__name__ = call.__qualname__ = name
    call.__annotations__ = annotations
    call.__signature__ = inspect.Signature(signature, return_annotation=str)  # type: ignore[attr-defined]
    return call


def _hint(schema: dict[str, Any]) -> Any:
    """The Python type a JSON schema's value takes (nested objects are only ``dict``: their keys go unsaid)."""
    kind = schema.get("type")
    if kind is None and isinstance(schema.get("anyOf"), list):
        hints = [_hint(option) for option in schema["anyOf"] if isinstance(option, dict)]
        union: Any = None
        for hint in hints:
            union = hint if union is None else union | hint
        return union if union is not None else str
    if isinstance(kind, list):
        return _hint({"anyOf": [{"type": k} for k in kind]})
    if kind == "null":
        return type(None)
    if kind == "array":
        items = schema.get("items")
        return types.GenericAlias(list, (_hint(items),)) if isinstance(items, dict) and items else list
    if kind in _JSON_TYPES:
        return _JSON_TYPES[kind]
    if isinstance(schema.get("enum"), list) and all(isinstance(v, str) for v in schema["enum"]):
        return str
    return str  # a schema without a type: the model writes it as text


def _json(value: Any) -> str:
    return json.dumps(value)


def episode_scores(environments: list[Any], completions: list[Any]) -> tuple[list[float | None], Counter[str]]:
    """End each environment's episode with the model's last reply in `completions`; the judged scores (None
    where an episode failed for infrastructure, or was not Nenyax's) and the count of each status."""
    ending = []
    for environment, completion in zip(environments, completions, strict=True):
        episode = environment._take() if isinstance(environment, ToolEnvironment) else None
        if episode is not None:
            ending.append(environment._spec.loop.submit(episode.end(_last_reply(completion))))
        else:
            ending.append(None)
    scores: list[float | None] = []
    counts: Counter[str] = Counter()
    for future in ending:
        trajectory = None if future is None else future.result()
        if trajectory is None:
            scores.append(None)
            continue
        counts[f"status/{trajectory.status.value}"] += 1
        trainable = trajectory.status.trainable and trajectory.judgment is not None
        counts["untrainable"] += not trainable
        scores.append(trajectory.judgment.score if trainable and trajectory.judgment is not None else None)
    return scores, counts


def _last_reply(completion: Any) -> str | None:
    """The text of the model's last reply; None where its turn ended on a tool call TRL did not make."""
    if isinstance(completion, str):
        return completion
    last = completion[-1] if isinstance(completion, list) and completion else None
    if not isinstance(last, dict) or last.get("role") != "assistant" or last.get("tool_calls"):
        return None
    content = last.get("content")
    if isinstance(content, list):  # content parts
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")
