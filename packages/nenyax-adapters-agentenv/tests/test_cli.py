"""The CLI on the shipped quiz: `nenyax check` reaches audited (the README's table says so), `nenyax eval`
plays every task with the reference, `nenyax try` plays the embedded model as the agent, ids recorded."""

import json
from importlib import metadata
from pathlib import Path

import pytest
from support import QUIZ, QUIZ_TASKS, nenyax

from nenyax_testsupport.tables import sync_marked_block, updating

pytestmark = pytest.mark.agentenv
README = Path(__file__).resolve().parents[1] / "README.md"


def test_check_reaches_audited_and_the_readme_table_says_so():
    done = nenyax("check", f"agentenv:{QUIZ}", "--require", "audited", "--json")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["tier"] == "audited"
    version = metadata.version("agentenv-framework")
    table = (
        "| URI | tasks | tier | measured on |\n| --- | --- | --- | --- |\n"
        f"| `agentenv:quiz` (shipped) | {len(QUIZ_TASKS)} | {report['tier']} | agentenv-framework {version} |\n"
    )
    found = sync_marked_block(README, "tier-table", table, update=updating())
    assert found == table, "The README's tier table is stale; regenerate it with NENYAX_UPDATE_TIERS=1."


def test_eval_plays_every_task_with_the_reference(tmp_path):
    out = tmp_path / "run"
    done = nenyax("eval", f"agentenv:{QUIZ}", "--policy", "reference", "--out", str(out), "--json", "-q")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rows = [json.loads(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]
    assert sorted(row["task_id"] for row in rows) == sorted(QUIZ_TASKS)
    assert all(row["status"] == "ok" and row["judgment"]["score"] == 1.0 for row in rows)


@pytest.mark.model
def test_try_plays_the_embedded_model_as_the_agent():
    done = nenyax("try", f"agentenv:{QUIZ}?task=capital", "-m", "local:smollm2-135m", "--max-tokens", "16", "--json")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    traj = json.loads(done.stdout)
    assert traj["status"] == "ok", traj.get("error")
    (call,) = traj["model_calls"]
    assert call["provider"] == "local"
    assert call["prompt_token_ids"]
    assert call["completion_token_ids"]
    assert len(call["logprobs"]) == len(call["completion_token_ids"])
    assert call["messages"][-1]["content"] == "What is the capital of France? Answer with one word."
    # AgentEnv's verifier judged what the model said: a score of 1 exactly when the reply holds "Paris".
    said = call["response"]["content"] or ""
    assert traj["judgment"]["score"] == (1.0 if "Paris" in said else 0.0)
