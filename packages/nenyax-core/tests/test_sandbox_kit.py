"""The sandbox kind's data and its conformance kit: the kit catches a backend that claims what it does not do.

The backend under test is `ClaimsIsolation`: `LocalProcessSandbox` (plain subprocesses, isolating nothing)
made to claim isolation: it is the flawed plugin each check must catch. The real backends pass the same kit in their
own distributions' suites (nenyax-sandboxes-bwrap, nenyax-sandboxes-docker).
"""

from __future__ import annotations

import pytest

from nenyax.core import Mount, NetworkPolicy, SandboxSpec
from nenyax.core.hookspecs import PluginSpec, hookimpl
from nenyax.core.plugins.registry import Registry
from nenyax.core.plugins.sandbox import bounded_text
from nenyax.testing import CHECKS, Subject, Verdict, run_check


class Plugin:
    @hookimpl
    def nenyax_register_sandboxes(self):
        return [
            PluginSpec(
                kind="sandbox",
                name="liar",
                factory="nenyax_testsupport.sandbox_fake:ClaimsIsolation",
                summary="claims all",
            ),
            PluginSpec(kind="sandbox", name="local", factory="nenyax_testsupport.sandbox_fake:LocalProcessSandbox"),
        ]


def outcome(check_id: str, name: str = "liar"):
    subject = Subject.from_registry("sandbox", name, Registry.from_plugins(("fakes", Plugin())))
    check = next(c for c in CHECKS["sandbox"] if c.id == check_id)
    return run_check(check, subject)


def messages(check_id: str) -> list[str]:
    found = outcome(check_id)
    assert found.verdict is Verdict.FAILED, found.reason
    return [f.message for f in found.findings]


def test_the_kit_catches_a_write_outside_the_sandbox():
    assert any("wrote" in m and "on this machine" in m for m in messages("sandbox/host-files-are-safe"))


def test_the_kit_catches_a_network_that_is_not_cut():
    assert "A sandbox with network='none' reached a server on this machine's loopback." in messages(
        "sandbox/network-is-cut"
    )


def test_the_kit_catches_a_memory_hog_that_runs_to_its_end():
    assert "A command holding 400 MB ran to its end under memory_mb=64." in messages("sandbox/limits-hold")


def test_the_kit_catches_processes_that_outlive_a_timeout_and_leaves_none():
    found = messages("sandbox/timeout-kills-the-tree")
    assert any("outlived the sandbox" in m for m in found)


def test_the_kit_catches_a_user_switch_that_does_not_happen():
    found = outcome("sandbox/runs-as-other-users")
    assert found.verdict is Verdict.ERROR  # the fake refuses another user: an InfraFailure, not a finding
    assert "cannot run one as 'nobody'" in found.reason


def test_limits_claimed_but_listed_unenforced_are_caught_and_honest_ones_pass():
    assert "memory_mb is claimed, yet the handle lists it as unenforced." in messages(
        "sandbox/unenforced-limits-are-said"
    )
    assert outcome("sandbox/unenforced-limits-are-said", name="local").verdict is Verdict.PASSED


def test_capability_checks_are_skipped_for_what_is_not_claimed():
    found = outcome("sandbox/builds-dockerfiles")
    assert found.verdict is Verdict.SKIPPED
    assert "image_build" in found.reason


def test_the_spec_takes_a_network_policy_by_name_and_refuses_others(tmp_path):
    assert SandboxSpec(image="x", network="proxy").network is NetworkPolicy.PROXY
    assert SandboxSpec(image="x", network=True).network is NetworkPolicy.FULL
    assert SandboxSpec(image="x").network is NetworkPolicy.NONE
    with pytest.raises(ValueError, match="network must be one of none, proxy, full"):
        SandboxSpec(image="x", network="some")
    with pytest.raises(ValueError, match="absolute path"):
        SandboxSpec(image="x", workdir="rel")
    with pytest.raises(ValueError, match="absolute path"):
        Mount(source=tmp_path, target="data")
    assert SandboxSpec(image="x", memory_mb=64, cpus=0.5).limits == {"cpus": 0.5, "memory_mb": 64}


def test_bounded_text_keeps_the_head_and_the_tail():
    text, cut = bounded_text(b"a" * 10 + b"b" * 10, limit=8)
    assert cut
    assert text == "aaaa\n[... 12 bytes cut ...]\nbbbb"
    assert bounded_text(b"short", limit=8) == ("short", False)
