"""miles' agent-function hook, reward model, group filter and abort, played against a session URL backed by
`nenyax serve-model`: the episode's calls are the session's recorded calls, and the reward is its judgment."""

from __future__ import annotations

import asyncio
import itertools
import subprocess
import sys
from argparse import Namespace

import orjson
import pytest
from samples import Sample

from nenyax.core import read_trajectories
from nenyax.core.errors import UsageError
from nenyax.trainers.miles import abort, episodes, keep_group, prompt_rows, reward, run_agent
from nenyax.trainers.miles.episodes import run_dirs

STEP = "reasoning_gym:basic_arithmetic?size=2"
ROLLOUT = "verifiers:nenyax.adapters.verifiers.demo:load_environment"
ARGS = Namespace(dynamic_sampling_filter_path="nenyax.trainers.miles.keep_group")


@pytest.fixture(autouse=True)
def runs(tmp_path, monkeypatch):
    monkeypatch.setenv("NENYAX_RUNS", str(tmp_path / "runs"))


def _trajectory(uri, trajectory_id):
    (run,) = [path for key, path in run_dirs().items() if key.startswith(uri.split("?")[0])]
    (found,) = [t for t in read_trajectories(run / "trajectories.jsonl") if t.id == trajectory_id]
    return found


@pytest.mark.parametrize("uri", [STEP, ROLLOUT], ids=["step", "rollout"])
def test_run_agent_plays_the_row_on_the_session_url_and_reward_is_its_judgment(uri, sessions):
    (row, *_) = prompt_rows(uri, limit=1)
    session = f"s-{uri[:4]}"
    sample = Sample(prompt=row["prompt"], metadata=row["metadata"])
    kwargs = {"max_tokens": 12, "temperature": 1.0, "skip_special_tokens": False}  # what miles maps and passes
    returned = asyncio.run(run_agent(sessions.session_url(session), row["prompt"], kwargs, row["metadata"]))
    sample.metadata.update(returned)  # what miles does with the dict
    verdict = returned["nenyax"]
    trajectory = _trajectory(uri, verdict["trajectory_id"])
    assert verdict["status"] == trajectory.status.value == "ok"
    assert asyncio.run(reward(ARGS, sample)) == trajectory.judgment.score == verdict["score"]
    # Every model call of the episode went through the session, with the trainer's sampling; the ids the
    # session recorded are the ids the trajectory holds.
    recorded = sessions.records[session]
    assert len(recorded) == len(trajectory.model_calls) >= 1
    for record, call in zip(recorded, trajectory.model_calls, strict=True):
        assert record["max_tokens"] == 12
        assert tuple(record["prompt_token_ids"]) == call.prompt_token_ids
        assert tuple(record["token_ids"]) == call.completion_token_ids
        assert record["logprobs"] == pytest.approx(list(call.logprobs))
    # miles' v1 session is linear: each request extends the one before.
    for before, after in itertools.pairwise(recorded):
        assert after["messages"][: len(before["messages"])] == before["messages"]
    if uri == STEP:
        assert recorded[0]["messages"] == row["prompt"]  # the row's prompt is the episode's first chat


def test_an_episode_the_policy_cannot_reach_is_dropped_never_a_reward_of_zero():
    (row, *_) = prompt_rows(STEP, limit=1)
    dead = "http://127.0.0.1:9/sessions/gone"  # nothing listens on the discard port
    returned = asyncio.run(run_agent(dead, row["prompt"], {"max_tokens": 8}, row["metadata"]))
    verdict = returned["nenyax"]
    assert verdict["status"] == "infra_error"
    assert verdict["score"] is None
    assert not verdict["trainable"]
    failed = Sample(metadata={**row["metadata"], **returned})
    judged = Sample(
        metadata={**row["metadata"], "nenyax": {**verdict, "status": "ok", "trainable": True, "score": 1.0}}
    )
    assert asyncio.run(reward(ARGS, [judged, failed])) == [1.0, 0.0]
    assert failed.remove_sample
    assert failed.status is Sample.Status.FAILED
    assert not judged.remove_sample
    assert keep_group(ARGS, [judged, failed]) is False  # the group never reaches an advantage
    assert keep_group(ARGS, [judged, judged]) is True


def test_reward_without_the_group_filter_is_one_sentence_before_any_score():
    with pytest.raises(UsageError, match=r"--dynamic-sampling-filter-path nenyax\.trainers\.miles\.keep_group"):
        asyncio.run(reward(Namespace(dynamic_sampling_filter_path=None), Sample(metadata={})))


def test_a_row_that_names_no_episode_or_no_task_is_one_sentence():
    with pytest.raises(UsageError, match="names no Nenyax episode"):
        asyncio.run(run_agent("http://127.0.0.1:9", [], {}, {"label": "4"}))
    with pytest.raises(UsageError, match="is not a task of"):
        asyncio.run(run_agent("http://127.0.0.1:9", [], {}, {"nenyax_uri": STEP, "nenyax_task": "nope"}))


def test_abort_stops_the_episodes_in_flight_and_keeps_what_they_recorded(sessions):
    (row, *_) = prompt_rows(STEP, limit=1)

    async def aborted():
        playing = asyncio.create_task(
            run_agent(sessions.session_url("slow"), row["prompt"], {"max_tokens": 60}, row["metadata"])
        )
        while not episodes._in_flight:  # the episode has started
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.5)  # and is waiting on its first call (60 tokens: seconds)
        stopped = await abort(ARGS)
        return stopped, await playing

    stopped, returned = asyncio.run(aborted())
    assert stopped == 1
    assert returned["nenyax"]["status"] == "interrupted"
    assert not returned["nenyax"]["trainable"]
    assert _trajectory(STEP, returned["nenyax"]["trajectory_id"]).status.value == "interrupted"


def test_the_rows_command_writes_miles_prompt_data(tmp_path):
    out = tmp_path / "rows.jsonl"
    command = [sys.executable, "-m", "nenyax.trainers.miles", STEP, "--out", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    rows = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert [row["metadata"]["nenyax_task"] for row in rows] == [
        row["metadata"]["nenyax_task"] for row in prompt_rows(STEP)
    ]
    assert all(row["prompt"][-1]["role"] == "user" for row in rows)
    bad = subprocess.run([*command[:3], "nope:thing"], capture_output=True, text=True, check=False)
    assert bad.returncode == 2
    assert bad.stderr.startswith("error: ")
    assert "Traceback" not in bad.stderr
