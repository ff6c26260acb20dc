"""Serve, then check back: a NeMo Gym resources server's rows served by `nenyax serve` (as OpenEnv) and checked with
Nenyax's own OpenEnv client reach the tier they reach when checked directly."""

import re
import subprocess
import sys
from pathlib import Path

from nemo_gym_helpers import uri

from nenyax.core import check
from nenyax.core.contract.trajectory import Tier


def _failed(report):
    return [(r.id, r.evidence) for r in report.results if r.outcome.value != "passed"]


def test_a_nemo_gym_server_served_checks_back_at_its_direct_tier(mcqa):
    direct = check(uri(mcqa), samples=5)
    assert direct.tier is Tier.AUDITED, _failed(direct)
    nenyax = Path(sys.executable).with_name("nenyax")
    argv = [str(nenyax), "serve", uri(mcqa), "--port", "0", "--share-reference"]
    server = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        announced = server.stdout.readline()
        found = re.search(r"at (http://\S+) \(WebSocket", announced)
        assert found, announced + (server.stdout.read() if server.poll() is not None else "")
        back = check(f"openenv:{found.group(1)}?reference=reference", samples=5)
    finally:
        server.terminate()
        server.wait(30)
    assert back.tier == direct.tier, _failed(back)
