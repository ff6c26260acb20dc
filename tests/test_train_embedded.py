"""`nenyax train` on a real environment with the embedded model: the incontext learner, one round."""

import json
import os
import subprocess
import sys


def test_incontext_trains_on_reasoning_gym_with_the_embedded_model(tmp_path):
    out = tmp_path / "run"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "NENYAX_MODEL"))}
    done = subprocess.run(
        [
            sys.executable, "-m", "nenyax.cli", "train", "reasoning_gym:basic_arithmetic",
            "--learner", "incontext", "--option", "max_tokens=24",
            "--rounds", "1", "--group-size", "2", "--tasks-per-round", "2", "--heldout", "3",
            "--out", str(out), "-q",
        ],
        capture_output=True, text=True, env={**env, "HF_HUB_OFFLINE": "1"}, timeout=900, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rounds = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["round"] for r in rounds] == [0, 1]
    assert rounds[0]["heldout_statuses"] == {"ok": 3}
    assert rounds[1]["train_statuses"] == {"ok": 4}
    assert rounds[1]["kept"] == (rounds[1]["heldout_score"] > rounds[0]["heldout_score"])
    trained = [json.loads(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]
    assert len(trained) == 4
    assert len({t["group_id"] for t in trained}) == 2
    for traj in trained:
        assert traj["policy"]["kind"] == "incontext"
        assert traj["policy"]["model"] == "smollm2-135m"
        [call] = traj["model_calls"]
        assert len(call["completion_token_ids"]) == len(call["logprobs"]) > 0
        assert call["params"]["temperature"] == 0.7  # training samples; held-out is greedy
    held = [json.loads(line) for line in (out / "heldout.jsonl").read_text().splitlines()]
    assert {c["params"]["temperature"] for t in held for c in t["model_calls"]} == {0.0}
    assert (out / "plot.png").stat().st_size > 1000
    assert (out / "checkpoints" / "round-0000" / "incontext.json").is_file()
