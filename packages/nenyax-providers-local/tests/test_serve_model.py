"""`nenyax serve-model`: the embedded model behind an OpenAI-compatible server with vLLM's token ids, as a
harness or a trainer reaches it, with the OpenAI SDK and with Nenyax's own `openai` provider: the ids and
logprobs it answers are what the model sampled (its tokenizer's chat template, a teacher-forced pass)."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import openai
import pytest
import torch

from nenyax.core import Endpoint, load
from nenyax_testsupport.served_model import served_model

MESSAGES = [{"role": "user", "content": "What is 2 + 3? Answer with a number."}]


@pytest.fixture(scope="module")
def served():
    with served_model() as url:
        yield url


def test_the_openai_sdk_gets_the_ids_and_logprobs_the_model_sampled(served, engine):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    client = openai.OpenAI(base_url=served, api_key="unused")
    reply = client.chat.completions.create(
        model="smollm2-135m",
        messages=MESSAGES,
        max_tokens=12,
        temperature=0.0,
        logprobs=True,
        extra_body={"return_token_ids": True},
    ).model_dump()
    tokenizer = AutoTokenizer.from_pretrained(engine.folder, local_files_only=True)
    prompt = reply["prompt_token_ids"]
    rendered = tokenizer.apply_chat_template(MESSAGES, add_generation_prompt=True, return_dict=True)
    assert prompt == list(rendered["input_ids"])  # the model's own chat template
    choice = reply["choices"][0]
    completion = choice["token_ids"]
    assert 0 < len(completion) <= 12
    assert tokenizer.decode(completion, skip_special_tokens=True).strip() == choice["message"]["content"].strip()
    logprobs = [entry["logprob"] for entry in choice["logprobs"]["content"]]
    model = AutoModelForCausalLM.from_pretrained(engine.folder, local_files_only=True, dtype=torch.float32)
    ids = torch.tensor([[*prompt, *completion]])
    with torch.inference_mode():
        forced = torch.log_softmax(model(input_ids=ids).logits[0].float(), dim=-1)
    expected = [float(forced[len(prompt) - 1 + i, token]) for i, token in enumerate(completion)]
    assert logprobs == pytest.approx(expected, abs=1e-3)
    assert reply["usage"]["completion_tokens"] == len(completion)
    assert [m.id for m in client.models.list().data] == ["local:smollm2-135m"]


def test_nenyax_plays_an_episode_against_it_token_faithfully(served):
    endpoint = Endpoint("openai:smollm2-135m", base_url=served, max_tokens=16, temperature=0.0)
    trajectory = load("reasoning_gym:basic_arithmetic?size=2").rollout(endpoint)
    asyncio.run(endpoint.aclose())
    (call,) = trajectory.model_calls
    assert call.prompt_token_ids  # ids recorded as the server returned them
    assert call.completion_token_ids
    assert len(call.logprobs) == len(call.completion_token_ids)
    assert trajectory.status.value == "ok"


def test_a_model_that_is_not_there_is_one_sentence_and_exit_2():
    done = subprocess.run(
        [sys.executable, "-m", "nenyax.cli", "serve-model", "local:nope", "--port", "0"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 2
    assert "knows no model 'nope'" in done.stderr
    assert "Traceback" not in done.stderr
