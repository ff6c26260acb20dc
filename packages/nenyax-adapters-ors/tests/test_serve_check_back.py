"""Serve, then check back: an ORS environment served by `nenyax serve` (as OpenEnv) and checked with Nenyax's own
OpenEnv client reaches the tier it reaches when checked directly. Its actions are tool calls, so this is where
an action schema the client cannot build from, or a server that mangles a call, shows."""

import re
import subprocess
import sys
from pathlib import Path

from nenyax.core import check
from nenyax.core.contract.trajectory import Tier


def _failed(report):
    return [(r.id, r.evidence) for r in report.results if r.outcome.value != "passed"]


def test_an_ors_environment_served_checks_back_at_its_direct_tier(ors_server):
    uri = f"ors:{ors_server.url}/mathenv"
    direct = check(uri, samples=3)
    assert direct.tier is Tier.AUDITED, _failed(direct)
    nenyax = Path(sys.executable).with_name("nenyax")
    argv = [str(nenyax), "serve", uri, "--port", "0", "--share-reference"]
    server = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        announced = server.stdout.readline()
        found = re.search(r"at (http://\S+) \(WebSocket", announced)
        assert found, announced + (server.stdout.read() if server.poll() is not None else "")
        back = check(f"openenv:{found.group(1)}?reference=reference", samples=3)
    finally:
        server.terminate()
        server.wait(30)
    assert back.tier == direct.tier, _failed(back)
