"""Token fidelity (`nenyax.core.contract.fidelity`): the rule on hand-made call records, each way it breaks.

The real model's multi-turn episodes are checked in nenyax-providers-local (tests/test_native_loops.py).
"""

from nenyax.core.contract.fidelity import token_fidelity
from nenyax.core.contract.trajectory import ModelCall

WORDS = {1: "<s>", 2: "hi", 3: " there", 4: "!", 5: " bye", 9: "<sep>"}


def decode(ids):
    return "".join(WORDS[i] for i in ids)


def call(prompt, completion, text=None, **response):
    reply = {"role": "assistant", "content": decode(completion) if text is None else text, **response}
    return ModelCall(
        messages=(), response=reply, prompt_token_ids=tuple(prompt), completion_token_ids=tuple(completion)
    )


def test_a_chain_whose_prompts_extend_the_turn_before_is_faithful():
    calls = [call([1, 2], [3]), call([1, 2, 3, 9, 2], [4]), call([1, 2, 3, 9, 2, 4, 9], [5])]
    verdict = token_fidelity(calls, decode)
    assert (verdict.faithful, verdict.call, verdict.calls) == (True, None, 3)


def test_a_re_tokenised_turn_is_named_with_where_it_differs():
    calls = [call([1, 2], [3, 4]), call([1, 2, 3, 9, 2], [5])]  # the sampled 4 came back as 9
    verdict = token_fidelity(calls, decode)
    assert (verdict.faithful, verdict.call) == (False, 2)
    assert "call 1's prompt and completion ids" in verdict.reason
    assert "differ at token 3 of 4" in verdict.reason


def test_completion_ids_that_do_not_decode_to_the_recorded_text_break_it():
    verdict = token_fidelity([call([1], [2]), call([1, 2], [3], text=" there!")], decode)
    assert (verdict.faithful, verdict.call) == (False, 2)
    assert "decode to ' there', not to ' there!'" in verdict.reason


def test_sibling_samples_of_one_prompt_are_held_to_the_call_before_them():
    calls = [call([1], [2]), call([1, 2, 9], [3]), call([1, 2, 9], [4]), call([1, 2, 9, 4], [5])]
    assert token_fidelity(calls, decode).faithful is True
    broken = [call([1], [2]), call([1, 2, 9], [3]), call([1, 2, 9], [4]), call([1, 5], [5])]
    assert token_fidelity(broken, decode).call == 4


def test_unknown_without_ids_or_a_tokenizer_and_tool_replies_skip_the_decoding():
    no_ids = ModelCall(messages=(), response={"role": "assistant", "content": "x"})
    assert token_fidelity([no_ids], decode).faithful is None
    assert token_fidelity([], decode).faithful is None
    unknown = token_fidelity([call([1], [2])], None)
    assert unknown.faithful is None
    assert "tokenizer is not at hand" in unknown.reason
    tool_reply = call([1], [2, 3], text=None, tool_calls=[{"id": "c", "function": {"name": "f"}}])
    tool_reply = ModelCall(
        messages=(),
        response={"role": "assistant", "content": None, "tool_calls": tool_reply.response["tool_calls"]},
        prompt_token_ids=(1,),
        completion_token_ids=(2, 3),
    )
    assert token_fidelity([tool_reply], decode).faithful is True
