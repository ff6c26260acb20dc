"""Serve, then check back: a NeMo Gym resources server's rows served by `nenyax serve` (as OpenEnv) and checked with
Nenyax's own OpenEnv client reach the tier they reach when checked directly."""

from nemo_gym_helpers import uri

from nenyax.core import check
from nenyax.core.contract.trajectory import Tier
from nenyax_testsupport.serving import nenyax_serve


def _failed(report):
    return [(r.id, r.evidence) for r in report.results if r.outcome.value != "passed"]


def test_a_nemo_gym_server_served_checks_back_at_its_direct_tier(mcqa):
    direct = check(uri(mcqa), samples=5)
    assert direct.tier is Tier.AUDITED, _failed(direct)
    with nenyax_serve(uri(mcqa)) as url:
        back = check(f"openenv:{url}?reference=reference", samples=5)
    assert back.tier == direct.tier, _failed(back)
