"""Serve, then check back: every step adapter installed here, served by `nenyax serve` and checked with Nenyax's
own OpenEnv client (nenyax-adapters-openenv), reaches the tier its environment reaches when checked directly.

The client builds its null and random actions from the action schema the server publishes, so this is where a
schema it cannot build from (or a server that mangles actions) shows: the tier stops at connectable. The oracle
travels in the state only when the server is asked to share it (`reference=True`), read back with
`?reference=reference`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import serving

import nenyax.adapters.datasets
from nenyax.core import Tier, check, load

SAMPLE = Path(nenyax.adapters.datasets.__path__[0]) / "sample.jsonl"

CASES = {
    "gymnasium, Discrete": "gymnasium:CartPole-v1",
    "gymnasium, MiniGrid (a third-party package; Dict observations)": "gymnasium:minigrid:MiniGrid-Empty-5x5-v0",
    "gymnasium, Box (continuous actions)": "gymnasium:Pendulum-v1",
    "gymnasium, tabular (a reference policy)": "gymnasium:FrozenLake-v1",
    "reasoning-gym (text actions, a reference policy)": "reasoning_gym:basic_arithmetic?size=20&seed=7",
    "datasets (a local file's rows, judged numerically)": f"hf:{SAMPLE}?judge=numeric&id_column=id",
}


def _failed(report) -> list[str]:
    return [f"{r.id}: {r.outcome.value} ({r.evidence})" for r in report.results if r.outcome.value != "passed"]


def _manifest(uri: str):
    env = load(uri)
    env.close()
    return env.manifest


def _check_back(url: str, reference: bool):
    return check(f"openenv:{url}" + ("?reference=reference" if reference else ""))


@pytest.mark.parametrize("uri", list(CASES.values()), ids=list(CASES))
def test_serve_then_check_back_reaches_the_direct_tier(uri):
    direct = check(uri)
    assert direct.tier >= Tier.TRAINABLE, _failed(direct)
    claims = _manifest(uri).capabilities
    # The oracle is shared only where there is one (a server without one has no `reference` to share).
    with serving(uri, **({"reference": True} if claims.reference_policy else {})) as served:
        back = _check_back(served.url, claims.reference_policy)
        wire = _manifest(f"openenv:{served.url}")
    assert back.tier == direct.tier, f"directly {direct.tier.name}, checked back {back.tier.name}: {_failed(back)}"
    # The client plays the same built-in policies over the wire as the environment offers in-process.
    assert (wire.capabilities.null_policy, wire.capabilities.random_policy) == (True, True), (
        wire.extra["null_action"],
        wire.extra["random_action"],
    )


def test_an_openenv_server_re_served_checks_back_at_its_own_tier():
    with serving("gymnasium:CartPole-v1") as first:
        upstream = f"openenv:{first.url}"
        direct = check(upstream)
        with serving(upstream) as second:
            back = _check_back(second.url, reference=False)
    assert direct.tier == Tier.TRAINABLE, _failed(direct)
    assert back.tier == direct.tier, _failed(back)


def test_the_oracle_stays_off_the_wire_unless_asked_for(arithmetic):
    # A server started without reference=True hands out no answers, so checking it back cannot audit: it says why.
    back = check(f"openenv:{arithmetic.url}")
    assert back.tier == Tier.TRAINABLE
    skipped = {r.id: r.evidence for r in back.results if r.outcome.value == "skipped"}
    assert "does not claim `reference_policy`" in skipped["audited/reference-beats-null"]
    with pytest.raises(Exception, match="no field 'reference'"):
        load(f"openenv:{arithmetic.url}?reference=reference")
