"""Serve, then check back: an ORS environment served by `nenyax serve` (as OpenEnv) and checked with Nenyax's own
OpenEnv client reaches the tier it reaches when checked directly. Its actions are tool calls, so this is where
an action schema the client cannot build from, or a server that mangles a call, shows."""

from nenyax.core import check
from nenyax.core.contract.trajectory import Tier
from nenyax_testsupport.serving import nenyax_serve


def _failed(report):
    return [(r.id, r.evidence) for r in report.results if r.outcome.value != "passed"]


def test_an_ors_environment_served_checks_back_at_its_direct_tier(ors_server):
    uri = f"ors:{ors_server.url}/mathenv"
    direct = check(uri, samples=3)
    assert direct.tier is Tier.AUDITED, _failed(direct)
    with nenyax_serve(uri) as url:
        back = check(f"openenv:{url}?reference=reference", samples=3)
    assert back.tier == direct.tier, _failed(back)
