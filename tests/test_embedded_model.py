"""The embedded model end to end: `nenyax try` with no API key or network, and served through the proxy."""

import asyncio
import json
import os
import re
import subprocess
import sys

import openai

from nenyax.core import Endpoint, Status, load
from nenyax.core.models.proxy import RecordingProxy
from nenyax_testsupport.signals import foreground_sigint


def test_try_plays_an_episode_with_the_embedded_model_by_default():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "NENYAX_MODEL"))}
    done = subprocess.run(
        [sys.executable, "-m", "nenyax.cli", "try", "reasoning_gym:basic_arithmetic", "--max-tokens", "24", "--json"],
        capture_output=True,
        text=True,
        env={**env, "HF_HUB_OFFLINE": "1"},
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    traj = json.loads(done.stdout)
    assert traj["status"] == "ok"
    assert traj["policy"]["name"] == "local:smollm2-135m"
    [call] = traj["model_calls"]
    assert len(call["completion_token_ids"]) == len(call["logprobs"]) > 0
    assert traj["steps"][0]["text"] == call["response"]["content"]


def test_the_embedded_models_prompts_read_alike_under_every_transformers_of_this_environment():
    """Here transformers is held at 5.5.4 (tinker-cookbook's pin), whose GGUF conversion read every space as
    <unk>: the folder, converted by whichever release came first, must read a chat prompt as the GGUF does."""
    from transformers import AutoTokenizer

    from nenyax.providers.local import models

    source = models.resolve_model("smollm2-135m")
    folder, _ = models.materialize(source)
    ours = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    gguf = AutoTokenizer.from_pretrained(source.path.parent, gguf_file=source.path.name, local_files_only=True)
    prompt = "<|im_start|>user\nWhat is 12 + 7? Answer with a number.<|im_end|>\n<|im_start|>assistant\n"
    ids = ours(prompt, add_special_tokens=False)["input_ids"]
    assert ids == gguf(prompt, add_special_tokens=False)["input_ids"]
    assert ours.decode(ids) == prompt
    assert ours.convert_tokens_to_ids("<|im_end|>") == ours.eos_token_id


def test_embedded_model_served_through_the_recording_proxy_keeps_token_ids():
    from transformers import AutoTokenizer

    async def main():
        endpoint = Endpoint("local:smollm2-135m", max_tokens=16, temperature=0.0)
        async with RecordingProxy() as proxy, proxy.episode(endpoint) as route:
            client = openai.AsyncOpenAI(base_url=route.base_url, api_key="unused", max_retries=0)
            reply = await client.chat.completions.create(
                model="anything", messages=[{"role": "user", "content": "Say hi."}]
            )
            await client.close()
            return reply, route.calls, endpoint

    reply, calls, endpoint = asyncio.run(main())
    [call] = calls
    ids = reply.choices[0].model_extra["token_ids"]
    assert ids == list(call.completion_token_ids)
    assert len(reply.choices[0].logprobs.content) == len(ids)
    tokenizer = AutoTokenizer.from_pretrained(endpoint.provider.engine("smollm2-135m").folder, local_files_only=True)
    assert tokenizer.decode(ids, skip_special_tokens=True) == reply.choices[0].message.content
    assert reply.model_extra["prompt_token_ids"] == list(call.prompt_token_ids)


def test_rollout_records_token_ids_that_detokenize_to_the_text():
    traj = load("reasoning_gym:basic_arithmetic").rollout(Endpoint(max_tokens=16, temperature=0.0))
    assert traj.status is Status.OK
    assert traj.policy.revision.startswith("sha256:")
    [call] = traj.model_calls
    assert call.chat_template_hash
    assert len(call.logprobs) == len(call.completion_token_ids)


def test_try_plays_frozenlake_with_the_embedded_model_through_the_text_codec(tmp_path):
    page = tmp_path / "frozenlake.html"
    # retries=0: each reply is one step here (retry turns are tested in the adapter package).
    uri = "gymnasium:FrozenLake-v1?on_unparseable=random&max_episode_steps=3&retries=0"
    done = subprocess.run(
        [sys.executable, "-m", "nenyax.cli", "try", uri, "--max-tokens", "16", "--json", "--html", str(page)],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    traj = json.loads(done.stdout)
    assert traj["status"] == "ok"
    assert 1 <= len(traj["steps"]) <= 3
    assert len(traj["model_calls"]) == len(traj["steps"])
    system = traj["messages"][0]
    assert system["role"] == "system"
    assert "<action>" in system["content"]
    assert "left" in system["content"]
    codec = load(uri).session()
    for step in traj["steps"]:
        assert step["text"] is not None
        assert ("fallback" in step["info"]) == ("unparseable" in step["info"])
        if "fallback" in step["info"]:  # the reply named no action: a random one, recorded as such
            assert step["info"]["fallback"] == "random"
            assert step["action"] in range(4)
        else:  # the action is what the text codec reads in the recorded reply
            assert step["action"] == codec.parse_action(step["text"])
    assert "shown to the model" in page.read_text()


def test_try_constrain_makes_the_embedded_model_reply_with_a_valid_frozenlake_action_every_turn():
    uri = "gymnasium:FrozenLake-v1?retries=0&max_episode_steps=6"  # no retries, no fallback: one bad reply would end it
    done = subprocess.run(
        [sys.executable, "-m", "nenyax.cli", "try", uri, "--constrain", "--seed", "3", "--json"],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        timeout=600,
        check=False,
    )
    traj = json.loads(done.stdout)
    assert traj["status"] == "ok", traj.get("error")  # played to its natural end: goal, hole or the step limit
    choices = ["<action>left</action>", "<action>down</action>", "<action>right</action>", "<action>up</action>"]
    assert traj["steps"]
    assert len(traj["model_calls"]) == len(traj["steps"])
    for step, call in zip(traj["steps"], traj["model_calls"], strict=True):
        assert call["params"]["guided_choice"] == choices
        assert step["text"] in choices
        assert step["action"] == choices.index(step["text"])
        assert "fallback" not in step["info"]


def test_ctrl_c_during_the_embedded_models_reply_stops_try_within_two_seconds(tmp_path):
    """A real SIGINT while the local model decodes a long reply: the decode loop is abandoned, the episode kept."""
    import signal
    import time

    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    # Warm the weight cache first: a first-ever conversion is not interruptible and is not what this tests.
    warm = ["try", "reasoning_gym:basic_arithmetic", "--max-tokens", "1"]
    subprocess.run([sys.executable, "-m", "nenyax.cli", *warm], capture_output=True, env=env, timeout=600, check=False)
    saved = tmp_path / "t.jsonl"
    args = [
        "try",
        "reasoning_gym:basic_arithmetic",
        "--max-tokens",
        "4000",
        "--param",
        "min_tokens=4000",  # no EOS before 4,000 tokens (~4 minutes here): the reply is still going at the signal
        "--save",
        str(saved),
    ]
    import pty
    import select

    # On a pseudo-terminal the CLI says when the model has loaded: the signal then lands mid-reply, never mid-load.
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "nenyax.cli", *args],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        env={**env, "TERM": "xterm"},
        preexec_fn=foreground_sigint,  # a test run started in the background would pass SIGINT on ignored
    )
    os.close(follower)
    drawn = b""

    def read_for(seconds, until_loaded=False):
        """Read what the command draws for `seconds`; False once it closed the terminal."""
        nonlocal drawn
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            ready, _, _ = select.select([leader], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # the command closed the terminal
                    return False
                if not chunk:
                    return False
                drawn += chunk
                if until_loaded and b"loaded in" in drawn:
                    return True
        return True

    try:
        assert read_for(300, until_loaded=True), drawn.decode(errors="replace")[-2000:]
        assert b"loaded in" in drawn, drawn.decode(errors="replace")[-2000:]
        read_for(1.5)  # well into the reply
        assert proc.poll() is None, drawn.decode(errors="replace")[-2000:]
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        read_for(30)  # to the end: the replay and the note, until the command closes the terminal
        proc.wait(timeout=30)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:  # never leave a 4,000-token decode running after a failure
            proc.kill()
        os.close(leader)
    err = drawn.decode(errors="replace")
    record = json.loads(saved.read_text().splitlines()[-1]) if saved.exists() and saved.read_text().strip() else None
    assert took < 2.5, err[-2000:]
    assert proc.returncode == 130, err[-2000:]
    assert record is not None
    assert record["status"] == "interrupted"


def test_try_at_a_terminal_shows_the_model_loading_apart_from_the_first_calls_latency(tmp_path):
    import re

    from nenyax_testsupport.terminal import run_in_terminal

    saved = tmp_path / "t.jsonl"
    args = ["try", "reasoning_gym:basic_arithmetic", "--max-tokens", "1", "--save", str(saved)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TERM": "xterm"}
    code, drawn = run_in_terminal([sys.executable, "-m", "nenyax.cli", *args], env, timeout=600)
    loaded = re.search(r"Model local:smollm2-135m loaded in ([0-9.]+) s", drawn)
    assert loaded, drawn[-2000:]
    record = json.loads(saved.read_text())
    # One token is a (wrong) answer, judged ok, or a reply the task cannot read: exit 0 only for ok.
    assert record["status"] in ("ok", "policy_error")
    assert code == (0 if record["status"] == "ok" else 1)
    [call] = record["model_calls"]
    # One token takes well under the load (reading ~540 MB of weights): the call's latency is its own.
    assert call["duration_s"] < float(loaded.group(1))


def _nenyax(*args):
    return subprocess.run(
        [sys.executable, "-m", "nenyax.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        timeout=600,
        check=False,
    )


def test_check_with_a_model_reports_its_token_fidelity_apart_from_the_tier():
    # Two actions at most: a multi-turn episode (two calls) that stays cheap (148 s with FrozenLake's 100).
    uri = "gymnasium:FrozenLake-v1?max_episode_steps=2"
    done = _nenyax("check", uri, "--samples", "2", "--model", "local:smollm2-135m", "--json")
    report = json.loads(done.stdout)
    # The exit code is the environment's checks' alone (two actions leave the planner short of the goal,
    # so the audit fails there), never the model check's.
    failed = any(r["outcome"] == "failed" for r in report["results"]) or report["tier"] == "none"
    assert done.returncode == (1 if failed else 0), done.stderr
    assert report["model"] == "local:smollm2-135m"
    [fidelity] = report["model_results"]
    assert fidelity["id"] == "trainable/token-fidelity"
    # FrozenLake is multi-turn, and the model samples at temperature 1: sometimes it samples ids that the
    # re-rendered transcript tokenises otherwise (seen: call 2, token 234 of 459). Either verdict names
    # several calls; a break names the call and the token where it differs.
    evidence = fidelity["evidence"]
    assert re.search(r"made ([2-9]|\d{2,}) call\(s\)", evidence), evidence
    if fidelity["outcome"] == "passed":
        assert "each prompt extends the call before" in evidence
    else:
        assert fidelity["outcome"] == "failed", evidence
        assert re.search(r"Call \d+'s (prompt ids do not begin|completion ids decode)", evidence), evidence
    assert {r["id"] for r in report["results"]}.isdisjoint({"trainable/token-fidelity"})


def test_check_model_options_without_a_model_are_one_sentence():
    done = _nenyax("check", "gymnasium:FrozenLake-v1", "--base-url", "http://127.0.0.1:1/v1")
    assert done.returncode != 0
    assert "--base-url and --api-key-env describe the model of --model" in done.stderr
    assert "Traceback" not in done.stderr


def test_try_and_eval_sample_the_same_tokens_for_the_same_episode(tmp_path):
    """The embedded model's sampling is seeded from the episode (task, seed, sample): at temperature 0.7,
    `try` and `eval` of the same task reply with the same tokens, and the seed is recorded."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "NENYAX_MODEL"))},
        "HF_HUB_OFFLINE": "1",
    }
    common = ["--temperature", "0.7", "--max-tokens", "24"]
    tried = subprocess.run(
        [sys.executable, "-m", "nenyax.cli", "try", "reasoning_gym:basic_arithmetic", "--task", "basic_arithmetic/42/3", *common, "--json"],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip
    assert tried.returncode == 0, tried.stderr
    out = tmp_path / "run"
    evaluated = subprocess.run(
        [sys.executable, "-m", "nenyax.cli", "eval", "reasoning_gym:basic_arithmetic", "--task-ids", "basic_arithmetic/42/3", *common,
         "--out", str(out), "-q"],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip
    assert evaluated.returncode == 0, evaluated.stderr
    [a] = json.loads(tried.stdout)["model_calls"]
    [record] = [json.loads(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]
    [b] = record["model_calls"]
    assert a["params"]["seed"] == b["params"]["seed"]
    assert a["completion_token_ids"] == b["completion_token_ids"]
