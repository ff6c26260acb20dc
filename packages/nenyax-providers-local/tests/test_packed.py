"""The lean Llama pass and the int4 weight format, against the Hugging Face model on the real SmolLM2.

The float32 lean pass must reproduce HF's logits (that pins the fused projections, the permuted
rotary pairs, the cache, the padding mask and rows leaving a batch); int4 must re-pack the GGUF's
Q4_1 layers without loss and record, for what it sampled, the logprobs its own logits give.
"""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
import torch

from nenyax.core.contract.chat import ChatRequest
from nenyax.core.errors import UsageError
from nenyax.providers.local.decode import Row, left_padded
from nenyax.providers.local.llama import LlamaDecoder, unsupported
from nenyax.providers.local.packed import INT4_GROUP, PackedLinear
from nenyax.providers.local.provider import LocalProvider
from nenyax.providers.local.sampling import Sampler, Sampling

QUESTION = ({"role": "user", "content": "Name three colours of the rainbow."},)


def _hf_logits(engine, ids):
    with torch.inference_mode():
        return engine.model(input_ids=torch.tensor([ids])).logits[0].float().numpy()


def _row(ids):
    return Row(prompt_ids=list(ids), sampler=Sampler(Sampling.from_params({})), max_new=4)


@pytest.fixture(scope="module")
def lean(engine):
    return LlamaDecoder(engine.model, "float32")


@pytest.fixture(scope="module")
def int4():
    provider = LocalProvider(dtype="int4")
    provider.prepare("smollm2-135m")
    return provider


def test_lean_float32_pass_gives_the_hf_logits(engine, lean):
    ids = engine.prompt_ids(QUESTION)
    assert np.abs(lean.score(ids) - _hf_logits(engine, ids)).max() < 1e-3


def test_padded_batch_steps_and_leaving_rows_keep_each_rows_logits(engine, lean):
    long = engine.prompt_ids(QUESTION)
    short = long[7:]
    rows = [_row(long), _row(short)]
    batch = lean.start(*left_padded(rows, engine._pad_id), room=4)
    with torch.inference_mode():
        first = batch.prefill()
        assert np.abs(first[1] - _hf_logits(engine, short)[-1]).max() < 1e-3  # the padded row
        picks = [int(first[0].argmax()), int(first[1].argmax())]
        second = batch.step(picks)
        assert np.abs(second[0] - _hf_logits(engine, [*long, picks[0]])[-1]).max() < 1e-3
        batch.keep([1])  # the long row finished: the short one goes on alone
        again = int(second[1].argmax())
        third = batch.step([again])
    assert third.shape[0] == 1
    assert np.abs(third[0] - _hf_logits(engine, [*short, picks[1], again])[-1]).max() < 1e-3


def test_int4_repacks_the_gguf_q4_1_layers_without_loss(engine):
    weight = engine.model.model.layers[0].mlp.down_proj.weight.detach()
    packed = PackedLinear(weight, "int4")
    # Multiplying by the identity reads the dequantised weight back out (in bfloat16, the activations' dtype).
    eye = torch.eye(weight.shape[1], dtype=torch.bfloat16)
    with torch.inference_mode():
        read_back = packed(eye).float().T
    # Q4_1 blocks land exactly on the 16 levels, so what is left is the bfloat16 rounding of scales and
    # the output (a relative 2^-8); one more bit of code error would be a whole level, ~1/15 of a block's range.
    blocks = weight.view(weight.shape[0], -1, INT4_GROUP)
    level = (blocks.amax(-1) - blocks.amin(-1)) / 15
    error = (read_back - weight).view_as(blocks).abs() / level[..., None]
    assert error.max() < 0.25


def test_int4_records_the_logprobs_of_what_it_sampled(int4, engine):
    request = ChatRequest(model="smollm2-135m", messages=QUESTION, params={"max_tokens": 12, "seed": 3})
    call = asyncio.run(int4.complete(request))
    assert call.fingerprint == f"{engine.revision}+int4"
    decoder = int4.engine("smollm2-135m").model
    assert isinstance(decoder, LlamaDecoder)
    ids = [*call.prompt_token_ids, *call.completion_token_ids]
    logits = torch.from_numpy(decoder.score(ids))
    logprobs = torch.log_softmax(logits, dim=-1)
    start = len(call.prompt_token_ids) - 1
    rescored = [float(logprobs[start + i, t]) for i, t in enumerate(call.completion_token_ids)]
    # The same weights rescoring in one pass: only bfloat16's batch-shape rounding differs.
    assert np.allclose(call.logprobs, rescored, atol=0.15)
    # ... and the int4 policy is close to, not the same as, the float32 one it came from.
    reference = torch.log_softmax(torch.from_numpy(_hf_logits(engine, ids)), dim=-1)
    fp32 = [float(reference[start + i, t]) for i, t in enumerate(call.completion_token_ids)]
    assert np.allclose(call.logprobs, fp32, atol=1.0)


def test_int4_greedy_answers_like_float32(int4):
    request = ChatRequest(
        model="smollm2-135m",
        messages=({"role": "user", "content": "What is the capital of France? One word."},),
        params={"temperature": 0, "max_tokens": 8},
    )
    assert "Paris" in asyncio.run(int4.complete(request)).response["content"]


def test_an_unknown_dtype_is_refused_in_one_sentence():
    with pytest.raises(UsageError, match=r"dtype must be one of float32, bfloat16, float16, int4, got 'int8'"):
        LocalProvider(dtype="int8")


def test_int4_refuses_a_model_it_cannot_run():
    from transformers import Qwen2Config

    assert "'qwen2' model" in unsupported(Qwen2Config())
