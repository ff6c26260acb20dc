"""The embedded model's multi-turn prompts: each later turn extends the exact ids an earlier reply sampled
(`nenyax.providers.local.turns`), so a trainer's merged sample holds what the model produced."""

from __future__ import annotations

import asyncio

from nenyax.core import ChatRequest

MODEL = "smollm2-135m"


def test_a_later_turn_extends_the_ids_the_reply_sampled_not_its_text_tokenized_again(provider, engine, tokenizer):
    asked = ({"role": "user", "content": "Say a word."},)
    first = asyncio.run(provider.complete(ChatRequest(model=MODEL, messages=asked, params={"max_tokens": 8})))
    earlier = [*first.prompt_token_ids, *first.completion_token_ids]
    later = (*asked, first.response, {"role": "user", "content": "Another."})
    second = asyncio.run(provider.complete(ChatRequest(model=MODEL, messages=later, params={"max_tokens": 8})))
    assert list(second.prompt_token_ids[: len(earlier)]) == earlier

    # A reply whose ids are not what its text tokenizes to (spelled a character at a time): only a prompt
    # built on the sampled ids keeps them.
    spelled = [i for ch in "lighthouse" for i in tokenizer(ch, add_special_tokens=False)["input_ids"]]
    assert spelled != tokenizer("lighthouse", add_special_tokens=False)["input_ids"]
    reply = {"role": "assistant", "content": "lighthouse"}
    prompt = engine.prompt_ids(asked)
    engine.transcripts.remember(asked, (), reply, prompt, [*spelled, tokenizer.eos_token_id])
    third = asyncio.run(
        provider.complete(ChatRequest(model=MODEL, messages=(*asked, reply, later[-1]), params={"max_tokens": 4}))
    )
    assert list(third.prompt_token_ids[: len(prompt) + len(spelled)]) == [*prompt, *spelled]
