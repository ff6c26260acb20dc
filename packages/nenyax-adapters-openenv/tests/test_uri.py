"""`openenv:` URIs: addresses, the adapter's own keys and the reset arguments (no server needed)."""

import pytest

from nenyax.adapters.openenv.adapter import EXAMPLES_VARIABLE, OpenEnvAdapter
from nenyax.adapters.openenv.options import parse_spec
from nenyax.core import BadURIError, load, parse_uri


def spec(uri):
    return parse_spec(parse_uri(uri))


@pytest.mark.parametrize(
    ("uri", "http", "ws"),
    [
        ("openenv:ws://127.0.0.1:8000", "http://127.0.0.1:8000", "ws://127.0.0.1:8000/ws"),
        ("openenv:http://127.0.0.1:8000/", "http://127.0.0.1:8000", "ws://127.0.0.1:8000/ws"),
        ("openenv:ws://127.0.0.1:8000/ws", "http://127.0.0.1:8000", "ws://127.0.0.1:8000/ws"),
        ("openenv:https://env.example/app", "https://env.example/app", "wss://env.example/app/ws"),
        ("openenv:wss://env.example/app/ws/", "https://env.example/app", "wss://env.example/app/ws"),
    ],
)
def test_addresses(uri, http, ws):
    got = spec(uri)
    assert (got.http, got.ws) == (http, ws)


def test_defaults_and_options():
    default = spec("openenv:ws://h:1")
    assert (default.tasks, default.reference, default.seeded, default.max_turns, default.reset) == (
        100,
        None,
        None,
        None,
        {},
    )
    got = spec("openenv:ws://h:1?tasks=5&reference=oracle.action&seeded=false&timeout=2.5&capacity_wait=0&max_turns=9")
    assert (got.tasks, got.reference, got.seeded, got.timeout, got.capacity_wait, got.max_turns) == (
        5,
        "oracle.action",
        False,
        2.5,
        0.0,
        9,
    )
    # Unset, the server's /metadata decides whether outcomes are random for a fixed seed; the URI's word wins.
    assert (default.stochastic, spec("openenv:ws://h:1?stochastic=true").stochastic) == (None, True)


def test_other_keys_are_reset_arguments():
    assert spec('openenv:ws://h:1?difficulty=3&level=easy&opts={"a":1}').reset == {
        "difficulty": 3,
        "level": "easy",
        "opts": {"a": 1},
    }


@pytest.mark.parametrize(
    ("uri", "words"),
    [
        (
            "openenv:__nenyax_no_such_environment__",
            "is not an OpenEnv server address; write it as openenv:ws://host:port",
        ),
        ("openenv:ftp://h:1", "is not an OpenEnv server address"),
        ("openenv:ws://h:99999", "port in 'ws://h:99999' is not a number"),
        ("openenv:ws://h:1?tasks=0", "tasks in"),
        ("openenv:ws://h:1?seeded=maybe", "seeded in"),
        ("openenv:ws://h:1?timeout=-1", "timeout in"),
        ("openenv:ws://h:1?capacity_wait=-1", "capacity_wait in"),
        ("openenv:ws://h:1?seed=3", "Remove seed from"),
        ("openenv:ws://h:1?reference=.", "reference in"),
    ],
)
def test_bad_uris_are_one_sentence(uri, words):
    with pytest.raises(BadURIError) as caught:
        load(uri)
    text = str(caught.value)
    assert words in text
    assert "\n" not in text
    assert text.endswith(".")


def test_examples_come_from_the_constructor_the_environment_or_port_8000(monkeypatch):
    monkeypatch.delenv(EXAMPLES_VARIABLE, raising=False)
    assert OpenEnvAdapter().examples() == ["openenv:ws://127.0.0.1:8000"]
    monkeypatch.setenv(EXAMPLES_VARIABLE, "openenv:ws://a:1, openenv:ws://b:2")
    assert OpenEnvAdapter().examples() == ["openenv:ws://a:1", "openenv:ws://b:2"]
    assert OpenEnvAdapter(examples=["openenv:ws://c:3"]).examples() == ["openenv:ws://c:3"]
