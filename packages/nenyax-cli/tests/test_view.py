"""`nenyax view`'s page: what its header and rows say, and the inputs it refuses (on hand-built trajectories).

tests/test_run_view_browser.py opens the page in a real Chromium (layout, filters, the replay frame).
"""

import re
import subprocess
import sys

import orjson

from nenyax.cli.run_view import render_run
from nenyax.core import Judgment, Mode, ModelCall, PolicyInfo, Status, Step, Trajectory

QUESTION = "Calculate the sum of every prime below one hundred, then say it once more. " * 3
REPLY = "Thinking it through... <answer>1060</answer>"


def _traj(**fields):
    call = ModelCall(
        messages=({"role": "user", "content": QUESTION},),
        response={"role": "assistant", "content": REPLY},
        params={"temperature": 0.7, "top_p": 0.95, "max_tokens": 256},
        duration_s=0.5,
    )
    base = {
        "env_uri": "reasoning_gym:basic_arithmetic",
        "manifest_digest": "sha256:0",
        "mode": Mode.STEP,
        "task_id": "basic_arithmetic/42/0",
        "seed": 42,
        "policy": PolicyInfo(kind="endpoint", name="local:smollm2-135m", provider="local", model="smollm2-135m"),
        "status": Status.OK,
        "judgment": Judgment(score=0.0, passed=False, feedback="answered '1060', expected '1061'"),
        "steps": (Step(observation=QUESTION, action=REPLY, text=REPLY, terminated=True, info={"answer": "1060"}),),
        "model_calls": (call,),
        "messages": (*call.messages, call.response),
    }
    return Trajectory(**{**base, **fields})


def _rows(page):
    start = page.index('id="nenyax-episodes">') + len('id="nenyax-episodes">')
    return orjson.loads(page[start : page.index("</script>", start)])


def _header(page):
    """The header's text, tags removed."""
    return re.sub(r"<[^>]+>", "", page[page.index("<h1>") : page.index('<div class="bar">')])


def test_the_header_names_the_policy_the_model_and_the_sampling_settings():
    header = _header(render_run([_traj(), _traj(sample=1)], title="run"))
    assert "local:smollm2-135m" in header
    assert "model smollm2-135m" in header
    assert "sampling max_tokens=256, temperature=0.7, top_p=0.95" in header


def test_a_run_without_a_model_says_so_in_the_header():
    header = _header(render_run([_traj(policy=PolicyInfo(kind="reference"), model_calls=())], title="run"))
    assert "policy reference" in header
    assert "model none" in header
    assert "sampling none" in header


def test_each_row_shows_the_question_the_target_and_the_extracted_answer_truncated():
    [row] = _rows(render_run([_traj()], title="run"))
    assert row["answer"] == "1060"
    assert row["target"] == "1061"
    assert row["question"].startswith("Calculate the sum of every prime")
    assert row["question"].endswith("\u2026")
    assert len(row["question"]) <= 80
    assert "td.clip{max-width" in render_run([_traj()], title="run")  # the cells clip to one line


def test_the_replay_shows_the_question_the_target_and_the_answer_in_full():
    page = render_run([_traj()], title="run")
    replay = orjson.loads(
        page[page.index('id="e0">') + len('id="e0">') : page.index("</script>", page.index('id="e0"'))]
    )
    assert QUESTION.strip() in replay.replace("&#x27;", "'")
    assert "<dt>target</dt><dd>1061</dd>" in replay
    assert "<dt>extracted answer</dt><dd>1060</dd>" in replay


def _view(*args):
    return subprocess.run(
        [sys.executable, "-m", "nenyax.cli", "view", *args], capture_output=True, text=True, timeout=120, check=False
    )


def test_an_empty_input_is_a_user_error(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.toml").write_text('uri = "x"\n', encoding="utf-8")
    (run / "trajectories.jsonl").write_text("\n", encoding="utf-8")
    for target in (empty, run):
        done = _view(str(target))
        assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
        assert "holds no episode" in done.stderr
        assert "Traceback" not in done.stderr
        assert done.stderr.strip().count("\n") == 0  # one sentence, on one line
    assert not (tmp_path / "empty.html").exists()
    assert not (run / "view.html").exists()
