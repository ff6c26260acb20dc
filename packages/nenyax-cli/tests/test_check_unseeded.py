"""`nenyax check` says why an environment is not seeded in its human output, not only in ``--json``."""

from nenyax.cli.commands.check import render_report, unseeded_reason
from nenyax.core import Capabilities
from nenyax.core.contract.trajectory import Tier
from nenyax.core.tiers.measure import TierReport
from nenyax_testsupport.fakes import ArithEnvironment

WHY = "Not honoured: sessions reset with seed 7 began from different observation and states."


def _report(seeded: bool) -> TierReport:
    # The manifest an OpenEnv server that ignores seeds gets: seeded=False, the measurement in extra["seeds"].
    caps = Capabilities(seeded=seeded, stable_task_ids=seeded, reference_policy=True, max_turns=1)
    env = ArithEnvironment("arith:add", size=3, seed=0, capabilities=caps, extra={"seeds": WHY})
    return TierReport(uri="arith:add", tier=Tier.EVALUABLE, results=(), manifest=env.manifest)


def test_the_reason_an_environment_is_not_seeded_is_printed(capsys):
    render_report(_report(seeded=False))
    out = capsys.readouterr().out
    assert f"Not seeded: {WHY}" in out
    assert out.index("Not seeded:") < out.index("Tier:")


def test_a_seeded_environment_gets_no_such_line(capsys):
    assert unseeded_reason(_report(seeded=True)) is None
    render_report(_report(seeded=True))
    assert "Not seeded" not in capsys.readouterr().out
