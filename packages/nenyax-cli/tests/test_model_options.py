"""The model options are declared once: the same names, defaults and variables in try, eval, check and train."""

import json

import click
import pytest
from click.testing import CliRunner

from nenyax.cli.main import cli
from nenyax.testing.model_server import ScriptedModelServer, serving_in_thread

SHARED = ("model", "max_tokens", "temperature", "params", "base_url", "api_key_env")
COMMANDS = ("try", "eval", "check")


def _options(command):
    found = cli.get_command(click.Context(cli), command)
    return {p.name: p for p in found.params}


@pytest.mark.parametrize("name", SHARED)
def test_each_model_option_is_the_same_in_every_command(name):
    first = _options(COMMANDS[0])[name]
    for command in COMMANDS[1:]:
        option = _options(command)[name]
        assert option.opts == first.opts
        assert option.envvar == first.envvar
        assert option.default == first.default
        assert type(option.type) is type(first.type)
        assert option.multiple == first.multiple


def test_the_variables_are_read_by_every_command_that_takes_them():
    assert _options("try")["model"].envvar == "NENYAX_MODEL"
    assert _options("train")["model"].envvar == "NENYAX_MODEL"
    assert _options("try")["base_url"].envvar == "NENYAX_BASE_URL"
    assert _options("check")["api_key_env"].envvar == "NENYAX_API_KEY_ENV"
    assert _options("try")["policy"].envvar == _options("eval")["policy"].envvar == "NENYAX_POLICY"
    assert "policy" not in _options("check")  # check plays its own policies


@pytest.mark.parametrize("command", ["try", "eval"])
def test_nenyax_model_and_base_url_pick_the_model_of_try_and_eval(command, site, monkeypatch, tmp_path):
    """The scripted server stands in for a model: what it was asked proves which model played."""
    monkeypatch.syspath_prepend(str(site))
    from nenyax.core.plugins.registry import default_registry

    default_registry.cache_clear()
    with serving_in_thread(ScriptedModelServer(lambda messages: "2")) as server:
        env = {"NENYAX_MODEL": "openai:scripted", "NENYAX_BASE_URL": server.base_url, "NENYAX_STRICT_PLUGINS": "0"}
        args = [command, "arith:add?size=2", "--json"]
        if command == "eval":
            args += ["--tasks", "1", "--out", str(tmp_path / "run")]
        done = CliRunner().invoke(cli, args, env=env, catch_exceptions=False)
        assert done.exit_code == 0, done.output
        assert server.last_body["model"] == "scripted"
    if command == "eval":
        assert json.loads(done.stdout)["episodes"] == 1
    default_registry.cache_clear()


def test_an_exported_model_is_no_mistake_for_a_plugin_check(site, monkeypatch):
    monkeypatch.syspath_prepend(str(site))
    done = CliRunner().invoke(
        cli, ["check", "judge", "nothere"], env={"NENYAX_MODEL": "openai:x"}, catch_exceptions=False
    )
    assert "takes no --model" not in done.output
    typed = CliRunner().invoke(cli, ["check", "judge", "nothere", "--model", "openai:x"], catch_exceptions=False)
    assert typed.exit_code == 2
    assert "takes no --model" in typed.output
