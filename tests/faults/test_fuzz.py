"""Property-based fuzzing of every parser that reads what another program sent: no crash, every failure classified.

Each property feeds `hypothesis`-generated input (shaped like the real thing, with the shape broken
at random) to a real parser of the project and allows two outcomes only: a parsed value, or the
classified failure that parser is documented to raise, with a message on one line. Anything else
(a KeyError, a TypeError, an IndexError) is a crash a hostile or broken peer could cause.

URI grammar and serde round trips have properties of their own in core (`test_uri.py`,
`test_serde.py`); here the URI grammar is fuzzed through every installed adapter's own spec parser.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math

import aiohttp
import numpy as np
import orjson
import pytest
from gymnasium import spaces
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nenyax.core import (
    BadURIError,
    EnvironmentFailure,
    InfraFailure,
    PolicyFailure,
    UsageError,
    VerifierFailure,
)
from nenyax.core.contract.uri import parse_uri
from nenyax.core.models.endpoint import ChatRequest
from nenyax.core.models.openai_wire import StreamAssembler, parse_response, parse_sse_line

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
REQUEST = ChatRequest(model="m", messages=({"role": "user", "content": "hi"},), params={})

# Keys the real payloads use, so that generated objects hit the parsers' branches, not just their first check.
WIRE_KEYS = st.sampled_from(
    [
        "choices", "message", "content", "role", "token_ids", "prompt_token_ids", "logprobs", "logprob",
        "top_logprobs", "token", "usage", "finish_reason", "tool_calls", "function", "name", "arguments",
        "id", "type", "model", "delta", "index", "text", "observation", "reward", "done", "metadata",
        "data", "ok", "output", "blocks", "finished", "error", "code", "message_id",
    ]
)  # fmt: skip
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(WIRE_KEYS | st.text(max_size=5), inner, max_size=5),
    max_leaves=25,
)


def json_text(value) -> str:
    """`value` as JSON text; NaN and Infinity written the way Python's json does (which JSON does not allow)."""
    return json.dumps(value, allow_nan=True, default=str)


def assert_one_line(exc: BaseException) -> None:
    text = str(exc)
    assert text, repr(exc)
    assert "\n" not in text, repr(text)


@FUZZ
@given(JSON)
def test_openai_chat_response(data):
    try:
        call = parse_response(data, REQUEST, where="http://127.0.0.1:1/v1", provider="openai")
    except InfraFailure as exc:
        assert_one_line(exc)
    else:
        assert all(isinstance(t, int) for t in call.completion_token_ids)
        assert call.logprobs is None or len(call.logprobs) == len(call.completion_token_ids)


SSE_LINES = st.lists(
    st.one_of(
        JSON.map(lambda v: b"data: " + json_text(v).encode()),
        st.just(b"data: [DONE]"),
        st.just(b""),
        st.binary(max_size=30),
        st.text(max_size=30).map(lambda t: t.encode()),
    ),
    max_size=8,
)


@FUZZ
@given(SSE_LINES)
def test_openai_server_sent_events(lines):
    assembler = StreamAssembler()
    try:
        for line in lines:
            parse_sse_line(line, assembler, "http://127.0.0.1:1/v1")
        parse_response(assembler.result(), REQUEST, where="http://127.0.0.1:1/v1", provider="openai")
    except InfraFailure as exc:
        assert_one_line(exc)


FRAMES = st.one_of(
    JSON.map(json_text),
    st.fixed_dictionaries(
        {"type": st.sampled_from(["observation", "state", "error", "mcp", "bogus"]), "data": JSON}
    ).map(json_text),
    st.binary(max_size=40),
)


@FUZZ
@given(FRAMES)
def test_openenv_client_frames(raw):
    from nenyax.adapters.openenv.wire import decode, observation_reply

    try:
        frame = decode(raw, "ws://127.0.0.1:1/ws")
        reply = observation_reply(frame.get("data"), "ws://127.0.0.1:1/ws")
    except EnvironmentFailure as exc:
        assert_one_line(exc)
    else:
        assert isinstance(reply.observation, dict)
        assert reply.reward is None or math.isfinite(reply.reward)
        assert isinstance(reply.done, bool)


@FUZZ
@given(st.lists(st.binary(max_size=40) | SSE_LINES.map(lambda ls: b"\n".join(ls) + b"\n"), max_size=6))
def test_ors_server_sent_events_and_results(chunks):
    from nenyax.adapters.ors.results import read_output
    from nenyax.adapters.ors.sse import EventParser, MalformedStream

    parser = EventParser()
    try:
        events = [event for chunk in chunks for event in parser.feed(chunk)]
    except MalformedStream as exc:
        assert_one_line(exc)
        return
    for event in events:
        assert isinstance(event.event, str)
        assert isinstance(event.data, str)
        try:
            output = read_output(event.data, base_url="http://127.0.0.1:1", what="a call")
        except (VerifierFailure, PolicyFailure) as exc:
            assert_one_line(exc)
        else:
            assert output.reward is None or math.isfinite(output.reward)


@FUZZ
@given(JSON.map(lambda v: {"output": {"blocks": [], "reward": v}, "ok": True}) | JSON)
def test_ors_result_objects(result):
    from nenyax.adapters.ors.results import read_output

    try:
        output = read_output(json_text(result), base_url="http://127.0.0.1:1", what="a call")
    except (VerifierFailure, PolicyFailure) as exc:
        assert_one_line(exc)
    else:
        assert output.reward is None or math.isfinite(output.reward)


@FUZZ
@given(st.integers(min_value=100, max_value=599), JSON.map(json_text) | st.text(max_size=40))
def test_nemo_gym_verify_responses(status, body):
    from nenyax.adapters.nemo_gym.environment import _reward
    from nenyax.adapters.nemo_gym.wire import Reply

    try:
        reward, extra = _reward(Reply(status=status, text=body, cookies={}), "http://127.0.0.1:1", {})
    except VerifierFailure as exc:
        assert_one_line(exc)
    else:
        assert status < 400
        assert math.isfinite(reward)
        assert isinstance(extra, dict)


GYM_SPACES = [
    spaces.Discrete(4),
    spaces.Discrete(3, start=-1),
    spaces.Box(low=-1.0, high=1.0, shape=(2,), dtype=np.float32),
    spaces.Box(low=0, high=5, shape=(), dtype=np.int64),
    spaces.MultiDiscrete([2, 3]),
    spaces.MultiBinary(3),
    spaces.Dict({"move": spaces.Discrete(2), "force": spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float32)}),
    spaces.Tuple((spaces.Discrete(2), spaces.Discrete(3))),
]
REPLIES = st.one_of(
    st.text(max_size=40),
    JSON.map(json_text),
    JSON.map(lambda v: f"I pick <action>{json_text(v)}</action>."),
    st.integers(-5, 10).map(lambda i: f"<action>{i}</action>"),
)


@FUZZ
@given(st.sampled_from(range(len(GYM_SPACES))), REPLIES)
def test_gymnasium_text_codec(which, text):
    from nenyax.adapters.gymnasium.codec import parse

    space = GYM_SPACES[which]
    try:
        action = parse(space, text, ("left", "stay", "right", "jump") if which == 0 else None)
    except PolicyFailure as exc:
        assert_one_line(exc)
    else:
        assert space.contains(action), (text, action)


ACTION_SCHEMA = {
    "type": "object",
    "properties": {"message": {"type": "string"}, "count": {"type": "integer", "minimum": 0}},
    "required": ["message"],
    "additionalProperties": False,
}


@FUZZ
@given(REPLIES | JSON.map(lambda v: json_text({"message": v})))
def test_openenv_text_codec(text):
    import jsonschema

    from nenyax.adapters.openenv.codec import parse
    from nenyax.adapters.openenv.schema import ActionSchema

    try:
        action = parse(ActionSchema(ACTION_SCHEMA), text)
    except PolicyFailure as exc:
        assert_one_line(exc)
    else:
        jsonschema.validate(action, ACTION_SCHEMA)


@FUZZ
@given(REPLIES | JSON.map(lambda v: f"<tool_call>{json_text(v)}</tool_call>"), st.booleans())
def test_ors_text_codec(text, plain):
    from nenyax.adapters.ors.codec import parse_reply

    try:
        call = parse_reply(text, ("submit", "search"), ("submit", "answer") if plain else None)
    except PolicyFailure as exc:
        assert_one_line(exc)
    else:
        assert isinstance(call["name"], str)
        assert call["name"]
        assert isinstance(call["input"], dict)


SPEC_PARSERS = {
    "gymnasium": "nenyax.adapters.gymnasium.options",
    "reasoning_gym": "nenyax.adapters.reasoning_gym.options",
    "datasets": "nenyax.adapters.datasets.options",
    "ors": "nenyax.adapters.ors.options",
    "hud": "nenyax.adapters.hud.options",
    "verifiers": "nenyax.adapters.verifiers.options",
    "lm_eval": "nenyax.adapters.lm_eval.options",
    "openenv": "nenyax.adapters.openenv.options",
}
PARAM_NAMES = st.sampled_from(["seed", "size", "split", "max_steps", "observations", "url", "config", "x"])
URIS = st.builds(
    lambda fmt, target, params, raw: (
        f"{fmt}:{target}" + ("?" + "&".join(f"{k}={v}" for k, v in params) if params else "") + raw
    ),
    st.sampled_from(sorted(SPEC_PARSERS)),
    st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=20),
    st.lists(st.tuples(PARAM_NAMES, st.text(max_size=8) | st.integers(-3, 10**6).map(str)), max_size=3),
    st.sampled_from(["", "&", "?", "#x", "&seed=1&seed=2", "%zz"]),
)


@FUZZ
@given(URIS)
def test_uri_grammar_through_every_adapter_spec(uri):
    import importlib

    try:
        parsed = parse_uri(uri)
    except BadURIError as exc:
        assert_one_line(exc)
        return
    module = importlib.import_module(SPEC_PARSERS[parsed.format])
    try:
        module.parse_spec(parsed)
    except UsageError as exc:
        assert_one_line(exc)


@pytest.fixture(scope="module")
def openenv_server():
    """`nenyax serve`'s app on a real socket, in a thread of its own for the whole module."""
    import threading

    from nenyax.server.openenv.app import running
    from nenyax_testsupport.fakes import ArithEnvironment

    loop = asyncio.new_event_loop()
    ready: asyncio.Future = loop.create_future()
    stop = asyncio.Event()

    async def serve():
        async with running(ArithEnvironment("arith:add", size=5, seed=0), max_frame_bytes=4096) as (_server, url):
            ready.set_result(url.replace("http", "ws") + "/ws")
            await stop.wait()

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    url = asyncio.run_coroutine_threadsafe(asyncio.wait_for(asyncio.shield(ready), 30), loop).result()
    yield url
    loop.call_soon_threadsafe(stop.set)
    thread.join(timeout=10)


SERVER_FRAMES = st.lists(
    st.one_of(
        st.fixed_dictionaries(
            {"type": st.sampled_from(["reset", "step", "state", "mcp", "bogus"])},
            optional={"data": JSON | st.fixed_dictionaries({"message": JSON}), "extra": JSON},
        ).map(json_text),
        JSON.map(json_text),
        st.text(max_size=30),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(frames=SERVER_FRAMES)
def test_openenv_server_answers_every_frame_and_never_fails_unexpectedly(openenv_server, frames, caplog):
    async def talk():
        answers = []
        async with aiohttp.ClientSession() as session, session.ws_connect(openenv_server) as ws:
            for frame in frames:
                await ws.send_str(frame)
                message = await ws.receive(timeout=10)
                assert message.type is aiohttp.WSMsgType.TEXT, (frame, message)
                answers.append(orjson.loads(message.data))
        return answers

    with caplog.at_level(logging.ERROR, logger="nenyax.server.openenv"):
        answers = asyncio.run(talk())
    assert len(answers) == len(frames)  # exactly one answer per frame
    for frame, answer in zip(frames, answers, strict=True):
        assert answer["type"] in {"observation", "state", "error", "mcp"}, (frame, answer)
        if answer["type"] == "error":
            # A bad frame is the client's mistake, never the server's own failure.
            assert answer["data"]["code"] != "EXECUTION_ERROR", (frame, answer)
    assert not [r for r in caplog.records if "unexpected" in r.getMessage()]
