"""The CLI on the shipped example: `nenyax check` reaches audited, `nenyax eval` plays every task with the
reference, and `nenyax try` plays the embedded model through karotte's builtin agent, ids recorded."""

import json
import re
from importlib import metadata
from pathlib import Path

import pytest
from support import EXAMPLE, EXAMPLE_TASKS, nenyax

from nenyax_testsupport.tables import sync_marked_block, updating

pytestmark = pytest.mark.podman


README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.mark.timeout(900)  # some 20 karotte runs, one or two at a time
def test_check_reaches_audited_and_the_readme_table_says_so():
    done = nenyax("check", f"karotte:{EXAMPLE}", "--require", "audited", "--json", timeout=1500)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["tier"] == "audited"
    versions = f"karotte {metadata.version('karotte')}, podman"
    table = (
        "| URI | tasks | tier | measured on |\n| --- | --- | --- | --- |\n"
        f"| `karotte:notes-desk` (shipped) | {len(EXAMPLE_TASKS)} | {report['tier']} | {versions} |\n"
    )
    found = sync_marked_block(README, "tier-table", table, update=updating())
    assert found == table, "The README's tier table is stale; regenerate it with NENYAX_UPDATE_TIERS=1."


def test_eval_plays_every_task_with_the_reference(tmp_path):
    out = tmp_path / "run"
    done = nenyax("eval", f"karotte:{EXAMPLE}", "--policy", "reference", "--out", str(out), "--json", "-q")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rows = [json.loads(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]
    assert sorted(row["task_id"] for row in rows) == ["count-words", "write-greeting"]
    assert all(row["status"] == "ok" and row["judgment"]["score"] == 1.0 for row in rows)


@pytest.mark.model
def test_try_plays_the_embedded_model_through_karottes_agent():
    # SmolLM2-135M does not count words: what is checked is that karotte's builtin agent drove the embedded
    # model through the proxy linked into its container, every call recorded with its token ids, and karotte's
    # judge scored what it said.
    done = nenyax(
        "try",
        f"karotte:{EXAMPLE}?task=count-words&turn_limit=2",
        "-m",
        "local:smollm2-135m",
        "--max-tokens",
        "32",
        "--json",
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    traj = json.loads(done.stdout)
    # Two turns are what the URI allows: SmolLM2 ends the step (karotte's judge scores what it said) or reaches
    # karotte's turn limit, which is the policy's failure, scored 0 (never an infrastructure status).
    if traj["status"] == "policy_error":
        assert "one of karotte's limits" in traj["error"]
    else:
        assert traj["status"] == "ok", traj.get("error")
    assert traj["model_calls"], "no model call reached the proxy"
    for call in traj["model_calls"]:
        assert call["provider"] == "local"
        assert call["prompt_token_ids"]
        assert call["completion_token_ids"]
        assert len(call["logprobs"]) == len(call["completion_token_ids"])
    # The first call is karotte's: its system prompt and the step's instructions.
    first = traj["model_calls"][0]["messages"]
    assert "sandboxed computing environment" in first[0]["content"]
    assert "notes.txt" in first[-1]["content"]
    assert [tool["function"]["name"] for tool in traj["model_calls"][0]["tools"]] == ["bash"]
    # karotte's RegexJudge reads every assistant message's text, joined.
    said = "\n\n".join(m.get("content") or "" for m in traj["messages"] if m.get("role") == "assistant")
    answered = traj["status"] == "ok" and re.search(r"words:\s*8\b", said) is not None
    assert traj["judgment"]["score"] == (1.0 if answered else 0.0)
