"""Bad input gets one sentence: not a bundle, a task that does not exist, a bundle with nothing to play
(AgentEnv's own `hello` and `echo-mcp` examples prompt no agent)."""

import pytest
from support import QUIZ, asking, nenyax, write_bundle

from nenyax.core import BadURIError, UsageError, load

pytestmark = pytest.mark.agentenv


def test_a_folder_that_is_not_a_bundle(tmp_path):
    (tmp_path / "notes.txt").write_text("not a bundle\n")
    with pytest.raises(BadURIError, match="is not an AgentEnv bundle"):
        load(f"agentenv:{tmp_path}")


def test_a_name_no_installed_package_ships(tmp_path):
    with pytest.raises(BadURIError, match="'no-such-bundle' is not an AgentEnv bundle"):
        load("agentenv:no-such-bundle")


def test_a_task_that_does_not_exist_gets_a_did_you_mean():
    with pytest.raises(BadURIError, match=r"'capitol' is not a task of .*Did you mean 'capital'"):
        load(f"agentenv:{QUIZ}?task=capitol")


def test_agentenvs_own_hello_example_has_no_agent_to_play():
    # Installed with agentenv-framework, found by name as `agent-env run hello` finds it: a script, no agent.
    with pytest.raises(
        UsageError, match=r"No task of the AgentEnv bundle .* prompts one agent to play .*prompts no agent"
    ):
        load("agentenv:hello")


def test_a_bundle_whose_envs_need_docker_says_so_before_anything_runs(monkeypatch):
    # AgentEnv's echo-mcp example deploys its env as a container; with no Docker daemon its preflight refuses.
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(
        UsageError, match=r"AgentEnv could not prepare the bundle .*echo-mcp: .*Docker daemon isn't reachable"
    ):
        load("agentenv:echo-mcp")


def test_a_task_file_agentenv_refuses(tmp_path):
    bundle = write_bundle(tmp_path / "b", broken=[{"id": "x", "type": "no_such_step"}])
    with pytest.raises(
        UsageError, match=r"AgentEnv could not prepare the bundle .*'no_such_step' is not a known step type"
    ):
        load(f"agentenv:{bundle}")


def test_the_cli_says_one_sentence(tmp_path):
    bundle = write_bundle(tmp_path / "b", only=asking("Say hi."))
    done = nenyax("try", f"agentenv:{bundle}?task=nope", "--policy", "null")
    assert done.returncode != 0
    assert "Traceback" not in done.stdout + done.stderr
    assert "'nope' is not a task of" in done.stderr
