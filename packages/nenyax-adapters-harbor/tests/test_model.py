"""A model policy plays harbor's terminus-2 through the recording proxy, in a sandbox whose only
network is that proxy.

The "model" is a Python function speaking terminus-2's JSON protocol (no model runs in this package's
tests; `nenyax try ... -m local:...` is the embedded model's job): what is real is harbor's agent, its
tmux session in the bwrap sandbox, the proxy recording every call, and the verifier.
"""

import json

from nenyax.adapters.harbor.adapter import example_task
from nenyax.core import Status, load


def scripted(messages):
    """First turn: write the file; then say the task is complete (terminus-2 asks to confirm it once)."""
    if not any(m["role"] == "assistant" for m in messages):
        command = {"keystrokes": "echo 'Hello, world!' > /app/hello.txt\n", "duration": 0.5}
        return json.dumps(
            {"analysis": "empty folder", "plan": "write it", "commands": [command], "task_complete": False}
        )
    return json.dumps({"analysis": "written", "plan": "done", "commands": [], "task_complete": True})


def test_terminus_2_solves_the_task_through_the_proxy():
    traj = load(example_task("hello-file") + "?max_turns=6").rollout(scripted)
    assert traj.status is Status.OK, traj.error
    assert traj.judgment.score == 1.0
    assert traj.info["harbor_agent"] == "terminus-2"
    assert traj.info["sandbox"]["network"] == "proxy"
    assert len(traj.model_calls) >= 2  # every call terminus-2 made is recorded
    first = traj.model_calls[0].messages[-1]["content"]
    assert "hello.txt" in first  # the instruction reached the model


def test_a_failing_model_is_a_policy_error_and_ends_soon():
    def broken(_messages):
        raise RuntimeError("the model is down")

    traj = load(example_task("hello-file")).rollout(broken)
    assert traj.status is Status.POLICY_ERROR
    assert traj.judgment.score == 0.0
    assert traj.timing.ended - traj.timing.started < 30  # not harbor's 40 s of client retries
