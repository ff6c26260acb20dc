"""`nenyax try`: one episode, a readable replay, and a safe self-contained HTML file.

The environment is core's in-memory `arith` fake, installed as a distribution on disk: nenyax-cli's
tests install no real adapter (the CLI depends on core alone); tests/ runs the CLI on real ones.
"""

import html.parser
import json
import os
import subprocess
import sys

import pytest

from nenyax.testing.model_server import ScriptedModelServer, serving_in_thread

EVIL = "<b>7</b></pre><script>document.title='pwned'</script> [bold red]not markup[/]"


@pytest.fixture(scope="module")
def model_server():
    """The scripted server on a background loop; replies with markup that must never be interpreted.

    Not a real model: the test needs this exact hostile reply, which no model gives on demand (the
    embedded model plays `nenyax try` for real in tests/test_embedded_model.py).
    """
    with serving_in_thread(ScriptedModelServer(lambda messages: EVIL)) as server:
        yield server


def nenyax(site, *args, color=False):
    env = {**os.environ, "PYTHONPATH": str(site), "NENYAX_STRICT_PLUGINS": "0", "COLUMNS": "200"}
    if color:
        env["FORCE_COLOR"] = "1"
        env.pop("NO_COLOR", None)
    return subprocess.run(
        [sys.executable, "-m", "nenyax.cli", *args], capture_output=True, text=True, env=env, timeout=300, check=False
    )


def test_builtin_policy_replay(site):
    done = nenyax(site, "try", "arith:add", "--policy", "reference")
    assert done.returncode == 0, done.stderr
    for text in ("environment", "arith:add", "turn 1", "observation", "What is", "score 1", "passed", "status ok"):
        assert text in done.stdout
    assert "\x1b[" not in done.stdout  # piped: no colour codes


def test_model_replay_shows_model_text_and_tokens_literally(site, model_server):
    done = nenyax(site, "try", "arith:add", "--model", "openai:scripted", "--base-url", model_server.base_url)
    assert done.returncode == 0, done.stderr
    assert "[bold red]not markup[/]" in done.stdout  # shown as typed, not as rich markup
    assert "model  (3 prompt / 77 completion tokens" in done.stdout
    assert "1 model call(s), 77 completion tokens" in done.stdout


def test_no_color_wins_over_a_terminal(site):
    coloured = nenyax(site, "try", "arith:add", "--policy", "null", color=True)
    assert "\x1b[" in coloured.stdout
    env_no_color = {"NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "nenyax.cli", "try", "arith:add", "--policy", "null"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(site), "FORCE_COLOR": "1", **env_no_color},
        check=False,
    )
    assert "\x1b[3" not in done.stdout  # no colour codes (styles such as bold may remain)


class _Collect(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.scripts, self.tags, self.text = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "script":
            self.scripts.append(dict(attrs))

    def handle_data(self, data):
        self.text.append(data)


def test_html_is_self_contained_and_model_text_stays_text(site, model_server, tmp_path):
    out = tmp_path / "replay.html"
    done = nenyax(
        site, "try", "arith:add", "--model", "openai:scripted", "--base-url", model_server.base_url, "--html", str(out)
    )
    assert done.returncode == 0, done.stderr
    page = _Collect()
    page.feed(out.read_text())
    assert page.scripts == [{"type": "application/json", "id": "nenyax-trajectory"}]
    assert "b" not in page.tags
    assert page.tags.count("script") == 1
    assert EVIL in "".join(page.text)
    assert "http://" not in out.read_text().replace(model_server.base_url, "")
    embedded = out.read_text().split('id="nenyax-trajectory">', 1)[1].split("</script>", 1)[0]
    assert json.loads(embedded)["steps"][0]["text"] == EVIL


def test_param_values_reach_the_model_server_typed(site, model_server):
    args = ["--param", "top_p=0.5", "--param", 'stop=["\\n"]', "--param", "seed=3"]
    done = nenyax(site, "try", "arith:add", "--model", "openai:scripted", "--base-url", model_server.base_url, *args)
    assert done.returncode == 0, done.stderr
    body = model_server.last_body
    assert body["top_p"] == 0.5
    assert body["stop"] == ["\n"]
    assert body["seed"] == 3
    assert body["max_tokens"] == 256


def test_json_and_save(site, tmp_path):
    saved = tmp_path / "t.jsonl"
    done = nenyax(site, "try", "arith:add", "--policy", "reference", "--json", "--save", str(saved))
    assert json.loads(done.stdout)["judgment"]["score"] == 1.0
    assert json.loads(saved.read_text())["policy"]["kind"] == "reference"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["try", "arith:add", "--model", "nocolon"], "Name the model as"),
        (["try", "arith:add", "--model", "nosuch:model"], "No provider named 'nosuch'"),
        (["try", "arith:nope", "--policy", "null"], "there is no 'nope'"),
        (["try", "arith:add", "--policy", "null", "--model", "openai:m"], "not both"),
        (["try", "arith:add", "--task", "add/0/999", "--policy", "null"], "is not a task"),
        (["try", "arith:add", "--policy", "null", "--constrain"], "not both"),
        (["try", "arith:add", "--param", "top_p"], "Write --param as KEY=VALUE"),
        (["try", "arith:add", "--param", "top_q=1"], "Did you mean top_p"),
    ],
)
def test_try_user_mistakes(site, args, fragment):
    done = nenyax(site, *args)
    assert done.returncode == 2
    assert fragment in done.stderr
    assert "Traceback" not in done.stderr


def test_model_server_retries_show_on_stderr_as_they_happen(site):
    """A server that always answers 500: each retry is one line on stderr, then the episode is infra_error."""
    from nenyax.testing.model_server import FaultPlan

    with serving_in_thread(ScriptedModelServer(faults=FaultPlan(rate=1.0, kinds=("500",)))) as server:
        done = nenyax(site, "try", "arith:add", "--model", "openai:m", "--base-url", server.base_url, "--json")
    assert done.returncode == 1
    retries = [line for line in done.stderr.splitlines() if "retrying in" in line]
    assert len(retries) == 6
    assert "failed attempt 1 of 7 (HTTP 500" in retries[0]
    assert json.loads(done.stdout)["status"] == "infra_error"


def test_a_host_that_does_not_resolve_is_one_sentence_and_no_retry(site):
    done = nenyax(site, "try", "arith:add", "--model", "openai:m", "--base-url", "http://nenyax-test.invalid/v1")
    assert done.returncode == 2
    assert "does not resolve" in done.stderr
    assert "retrying" not in done.stderr


def test_a_seed_the_environment_records_differently_is_said_not_hidden(site):
    done = nenyax(site, "try", "arith:add", "--policy", "reference", "--seed", "5")
    assert done.returncode == 0
    assert "Note: --seed 5 chose task add/0/0; the environment recorded seed 0." in done.stderr
