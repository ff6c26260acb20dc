"""The `acme` provider through an Endpoint, as an episode uses it: what the conformance kit cannot know."""

import asyncio

from nenyax.core import ChatRequest, Endpoint

from nenyax_acme.provider import AcmeProvider


def test_the_echo_is_recorded_with_its_tokens_and_cut_at_max_tokens():
    messages = ({"role": "user", "content": "hello there"},)
    request = ChatRequest(model="echo", messages=messages, params={"max_tokens": 5})
    call = asyncio.run(AcmeProvider().complete(request))
    assert call.response == {"role": "assistant", "content": "hello"}
    assert call.finish_reason == "length"
    assert AcmeProvider().detokenize("echo", call.completion_token_ids) == "hello"


def test_an_endpoint_finds_it_by_name():
    assert isinstance(Endpoint("acme:echo").provider, AcmeProvider)
