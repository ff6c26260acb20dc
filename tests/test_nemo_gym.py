"""NeMo Gym end to end through the CLI: real resources servers started by the adapter, the embedded model.

The servers run in the Python 3.12 venv nox builds for nemo-gym (NENYAX_NEMO_GYM_PYTHON); without
it the tests that start one skip, saying so (a server that is down needs none).
"""

import json
import socket

import pytest

from nenyax.adapters.nemo_gym import launcher
from nenyax.core import UsageError
from nenyax_testsupport.cli import run_nenyax


@pytest.fixture(scope="module")
def nemo_python():
    try:
        return launcher.server_python()
    except UsageError as exc:
        pytest.skip(str(exc))


@pytest.mark.parametrize("server", ["mcqa", "reasoning_gym"])
def test_check_reaches_audited_on_nemo_gyms_own_servers(nemo_python, server):
    done = run_nenyax("check", f"nemo_gym:{server}", "--json", "--require", "audited")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["tier"] == "audited"
    assert report["manifest"]["format_version"] == "0.7.0"  # the default server venv (its pyproject)


@pytest.mark.parametrize("server", ["mcqa", "reasoning_gym"])
def test_try_plays_an_episode_with_the_embedded_model(nemo_python, server):
    done = run_nenyax("try", f"nemo_gym:{server}", "--max-tokens", "24", "--json")
    assert done.returncode == 0, done.stderr
    traj = json.loads(done.stdout)
    assert traj["status"] == "ok"
    assert traj["policy"]["name"] == "local:smollm2-135m"
    assert traj["judgment"]["judge"] == f"nemo_gym:{server}/verify"
    assert 0.0 <= traj["judgment"]["score"] <= 1.0
    [call] = traj["model_calls"]
    [step] = traj["steps"]
    assert step["text"] == call["response"]["content"] == step["action"]
    assert "reward" in step["info"]["verify"]  # the server's own verdict, recorded beside the score
    assert traj["messages"][0]["role"] == "user"
    assert traj["messages"][-1]["role"] == "assistant"


def test_the_cli_says_a_server_is_down_in_one_line(tmp_path):
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"responses_create_params": {"input": [{"role": "user", "content": "hi"}]}}) + "\n")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    done = run_nenyax("try", f"nemo_gym:{url}?rows={rows}", "--policy", "null", timeout=120)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert url in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    checked = run_nenyax("check", f"nemo_gym:{url}?rows={rows}", "--json", timeout=120)
    assert checked.returncode == 1, checked.stderr  # nothing was measured: no tier reached is no success
    report = json.loads(checked.stdout)
    assert report["tier"] == "none"
    assert report["results"][0]["outcome"] == "skipped"
    assert url in report["results"][0]["evidence"]
