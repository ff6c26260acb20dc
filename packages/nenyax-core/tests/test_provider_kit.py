"""The provider conformance kit: core's ``openai`` provider (against a loopback OpenAI-compatible server)
and a sound in-process fake pass it, and each of its checks catches a provider broken its way (fakes in
`nenyax_testsupport.kit_fakes`, one flaw each).

The ``local`` provider passes the same kit in its distribution's tests (a real model, in process).
"""

from __future__ import annotations

import pytest

from nenyax.core.hookspecs import PluginSpec, hookimpl
from nenyax.core.plugins.registry import Registry
from nenyax.testing import CHECKS, Report, Subject, Verdict
from nenyax.testing.checks.provider import kit_model
from nenyax.testing.model_server import ScriptedModelServer, serving_in_thread

FAKES = {
    "parrot": "nenyax_testsupport.kit_fakes:ParrotProvider",
    "blocking": "nenyax_testsupport.kit_fakes:BlockingProvider",
    "stringhonours": "nenyax_testsupport.kit_fakes:StringHonoursProvider",
    "forgetful": "nenyax_testsupport.kit_fakes:ForgetfulProvider",
    "misaligned": "nenyax_testsupport.kit_fakes:MisalignedProvider",
    "unfinished": "nenyax_testsupport.kit_fakes:UnfinishedStreamProvider",
    "closeonce": "nenyax_testsupport.kit_fakes:CloseOnceProvider",
    "echo": "nenyax_testsupport.fakes:EchoProvider",
    "openai": "nenyax.core.builtin_plugins.openai_provider:OpenAIProvider",
}
OWN = [
    "provider/calls-are-coroutines",
    "provider/honours-names-fields",
    "provider/completes-a-chat",
    "provider/token-arrays-line-up",
    "provider/streams-what-it-completes",
    "provider/closes-twice",
]


class Plugin:
    @hookimpl
    def nenyax_register_providers(self):
        return [PluginSpec(kind="provider", name=n, factory=f, summary="a fake") for n, f in FAKES.items()]


def outcomes(name, options=None):
    subject = Subject.from_registry("provider", name, Registry.from_plugins(("fakes", Plugin())), options=options)
    return {o.check.id: o for o in Report.of(CHECKS["provider"], subject).outcomes}


def test_the_kit_is_the_common_checks_and_the_provider_s_own():
    assert [c.id for c in CHECKS["provider"]][-len(OWN) :] == OWN


def test_a_sound_in_process_provider_passes_every_check():
    found = outcomes("parrot")
    bad = {cid: (o.verdict, o.reason, o.findings) for cid, o in found.items() if o.verdict is not Verdict.PASSED}
    # An in-memory registry, and a fake outside nenyax/ (nenyax_testsupport): no source tree to read.
    assert bad.keys() == {"provider/entry-point-named-after-distribution", "provider/no-namespace-init"}, bad
    assert {verdict for verdict, _, _ in bad.values()} == {Verdict.SKIPPED}


def test_core_s_openai_provider_passes_against_a_loopback_server_asked_once():
    with serving_in_thread(ScriptedModelServer(lambda messages: "hello")) as server:
        found = outcomes("openai", {"base_url": server.base_url, "api_key": "unused"})
    for check in OWN:
        if check == "provider/honours-names-fields":  # it forwards every field to the server
            assert (
                found[check].reason == "the provider has no honours: it forwards every field to a server that decides"
            )
        else:
            assert found[check].verdict is Verdict.PASSED, (check, found[check].reason, found[check].findings)
    assert server.requests == 2  # one complete and one stream, shared by every check that reads them
    assert server.last_body["max_tokens"] == 8  # the kit's short reply


@pytest.mark.parametrize(
    ("name", "check_id", "says"),
    [
        ("blocking", "provider/calls-are-coroutines", "complete is not a coroutine function"),
        ("stringhonours", "provider/honours-names-fields", "honours is 'max_tokens temperature'; it must be"),
        ("forgetful", "provider/completes-a-chat", "The recorded call's messages are (), not the request's"),
        ("misaligned", "provider/token-arrays-line-up", "(completion_token_ids 5, tokens 5, logprobs 4)"),
        ("unfinished", "provider/streams-what-it-completes", "stream() did not end with the recorded call"),
        ("closeonce", "provider/closes-twice", "The second aclose() on an event loop that made no call raised"),
    ],
)
def test_each_check_catches_the_flaw_it_is_for_and_only_that_one(name, check_id, says):
    found = outcomes(name)
    caught = found[check_id]
    assert caught.verdict is Verdict.FAILED, (caught.verdict, caught.reason)
    assert any(says in f.message for f in caught.findings), [f.message for f in caught.findings]
    assert [cid for cid, o in found.items() if not o.ok()] == [check_id]  # no other check fails, none crashes


def test_a_provider_needing_a_server_is_not_asked_without_one_and_says_how():
    found = outcomes("echo")  # no prepare(), no base_url: only a network server could answer
    for check in ("provider/completes-a-chat", "provider/token-arrays-line-up"):
        assert found[check].verdict is Verdict.SKIPPED
        assert "--option base_url=http://127.0.0.1:8000/v1" in found[check].reason
    assert found["provider/closes-twice"].verdict is Verdict.PASSED  # closing needs no call


def test_a_server_that_does_not_answer_skips_the_exchange_with_its_sentence():
    found = outcomes("openai", {"base_url": "http://127.0.0.1:9/v1", "api_key": "unused", "max_retries": 0})
    reason = found["provider/completes-a-chat"].reason
    assert found["provider/completes-a-chat"].verdict is Verdict.SKIPPED
    assert reason.startswith("the provider did not answer the kit's request for 'nenyax-kit' (InfraFailure: ")


def test_the_model_asked_for_is_the_one_nenyax_model_or_the_default_endpoint_names(monkeypatch):
    registry = Registry.from_plugins(("fakes", Plugin()))
    monkeypatch.delenv("NENYAX_MODEL", raising=False)
    assert kit_model(Subject.from_registry("provider", "local", registry)) == "smollm2-135m"
    assert kit_model(Subject.from_registry("provider", "parrot", registry)) == "nenyax-kit"
    monkeypatch.setenv("NENYAX_MODEL", "parrot:tiny")
    assert kit_model(Subject.from_registry("provider", "parrot", registry)) == "tiny"
