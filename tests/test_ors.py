"""The ors adapter through the real CLI against real ORS servers (ors-sdk and openreward) on loopback.

The servers serve the adapter's own test environments (packages/nenyax-adapters-ors/tests/).
"""

import importlib.util
import json
from pathlib import Path

import openreward as openreward_sdk  # noqa: F401 - a dependency of this suite: a broken install fails here, it never skips
import pytest

from nenyax_testsupport.cli import run_nenyax

ORS_TESTS = Path(__file__).parent.parent / "packages" / "nenyax-adapters-ors" / "tests"
_spec = importlib.util.spec_from_file_location("nenyax_ors_test_servers", ORS_TESTS / "servers.py")
servers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(servers)


@pytest.fixture(scope="module")
def ors_sdk():
    with servers.Served("ors_envs.py") as served:
        yield served


@pytest.fixture(scope="module")
def openreward():
    with servers.Served("openreward_envs.py") as served:
        yield served


def test_check_of_the_ors_sdk_math_env_is_audited(ors_sdk):
    done = run_nenyax("check", f"ors:{ors_sdk.url}/mathenv", "--json", "--samples", "3")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["tier"] == "audited"
    assert {r["outcome"] for r in report["results"]} == {"passed"}


def test_check_of_the_openreward_env_is_audited(openreward):
    done = run_nenyax("check", f"ors:{openreward.url}/capitalenv", "--require", "audited")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Tier: audited" in done.stdout


def test_try_plays_an_episode_with_the_embedded_model_through_a_terminal_tool(ors_sdk):
    done = run_nenyax(
        "try",
        f"ors:{ors_sdk.url}/mathenv?terminal_tool=submit&max_turns=1",
        "--max-tokens",
        "24",
        "--temperature",
        "0",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    traj = json.loads(done.stdout)
    assert traj["status"] == "ok"
    assert traj["policy"]["name"] == "local:smollm2-135m"
    [call] = traj["model_calls"]
    assert len(call["completion_token_ids"]) == len(call["logprobs"]) > 0
    [step] = traj["steps"]
    assert step["text"] == call["response"]["content"]
    # A plain reply is the answer; one with a tool call names the tool itself.
    assert step["action"]["name"] in ("submit", "hint", "slow")
    assert step["info"]["output"]["finished"] in (True, False)
    assert "submit" in traj["messages"][0]["content"]
    assert traj["messages"][1]["content"] == "What is 2+2?"
    assert traj["judgment"]["judge"] == "ors:mathenv"


def test_try_with_the_embedded_model_classifies_a_reply_without_a_tool_call(ors_sdk):
    done = run_nenyax("try", f"ors:{ors_sdk.url}/mathenv?max_turns=2", "--max-tokens", "24", "--json")
    traj = json.loads(done.stdout)
    assert done.returncode == (0 if traj["status"] == "ok" else 1), done.stderr
    assert traj["status"] in ("ok", "policy_error")
    assert traj["model_calls"]
    assert traj["steps"][-1]["text"] == traj["model_calls"][-1]["response"]["content"]
    if traj["status"] == "policy_error":  # a 135M model rarely writes a valid <tool_call>: it is the policy's fault
        assert traj["judgment"]["score"] == 0.0
        assert traj["error"].startswith("PolicyFailure: ")
    else:  # it wrote one: the server judged the episode
        assert traj["judgment"]["judge"] == "ors:mathenv"
        assert traj["error"] is None
        assert {s["action"]["name"] for s in traj["steps"]} <= {"submit", "hint", "slow"}


def test_try_on_the_openreward_env_sends_the_plain_reply_to_its_terminal_tool(openreward):
    done = run_nenyax("try", f"ors:{openreward.url}/capitalenv?max_turns=2", "--max-tokens", "16", "--json")
    traj = json.loads(done.stdout)
    assert traj["status"] in ("ok", "policy_error"), done.stderr
    assert done.returncode == (0 if traj["status"] == "ok" else 1), done.stderr
    assert traj["model_calls"]
    assert traj["steps"][-1]["text"] == traj["model_calls"][-1]["response"]["content"]
    if traj["status"] == "ok":  # a plain reply goes to the terminal tool `answer`; or two lookups reach max_turns
        assert traj["steps"][-1]["action"]["name"] in ("answer", "lookup")
        assert traj["judgment"]["judge"] == "ors:capitalenv"
        assert traj["judgment"]["score"] in (0.0, 1.0)
    else:  # a tool call the codec cannot read (or a second lookup past max_turns) is the policy's fault, scored 0
        assert traj["judgment"]["score"] == 0.0
        assert traj["error"].startswith("PolicyFailure: ")


def test_a_server_that_is_down_is_one_sentence_for_try_and_a_skip_for_check():
    url = f"http://127.0.0.1:{servers.free_port()}"
    done = run_nenyax("try", f"ors:{url}/mathenv", "--policy", "reference")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert (
        done.stderr.strip() == f"Error: Cannot reach the ORS server at {url} (connection refused); is it running there?"
    )
    done = run_nenyax("check", f"ors:{url}/mathenv", "--json")
    assert done.returncode == 1, done.stderr  # nothing was measured: no tier reached is no success
    report = json.loads(done.stdout)
    assert report["tier"] == "none"
    assert report["results"][0]["outcome"] == "skipped"
    assert url in report["results"][0]["evidence"]
