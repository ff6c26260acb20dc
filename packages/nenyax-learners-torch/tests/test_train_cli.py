"""`nenyax train reasoning_gym:... --learner grpo --rounds 2` end to end: the embedded model, real episodes,
two rounds kept or reverted on held-out, checkpoints and the plot."""

import json
import math
import os
import subprocess
import sys


def test_grpo_trains_two_rounds_from_the_command_line(tmp_path):
    out = tmp_path / "run"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "NENYAX_MODEL"))}
    done = subprocess.run(
        [
            sys.executable, "-m", "nenyax.cli", "train", "reasoning_gym:basic_arithmetic", "--learner", "grpo",
            "--option", "max_tokens=24", "--rounds", "2", "--group-size", "2", "--tasks-per-round", "2",
            "--heldout", "3", "--out", str(out), "-q",
        ],
        capture_output=True, text=True, env={**env, "HF_HUB_OFFLINE": "1"}, timeout=1200, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rounds = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["round"] for r in rounds] == [0, 1, 2]
    for r in rounds[1:]:
        assert r["kept"] == (r["heldout_score"] > max(x["heldout_score"] for x in rounds[: r["round"]] if x["kept"]))
        assert r["trained_on"] == 4
        assert math.isfinite(r["update"]["loss"])
    trained = [json.loads(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]
    assert len(trained) == 8
    assert {t["policy"]["kind"] for t in trained} == {"endpoint"}
    assert all(t["model_calls"][0]["completion_token_ids"] for t in trained)
    assert (out / "checkpoints" / "round-0000" / "learner.json").is_file()
    assert (out / "plot.png").read_bytes()[:4] == b"\x89PNG"
    assert "Loading weights" not in done.stderr
