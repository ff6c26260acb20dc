"""The progress bar of `nenyax eval` at a terminal (a pseudo-terminal here): the record's size as it grows.

The environment is core's arithmetic fake in a distribution written to disk (see test_first_steps.py).
"""

import os
import sys

from nenyax.cli.commands.eval_ import readable_size
from nenyax_testsupport.distributions import write_distribution
from nenyax_testsupport.terminal import run_in_terminal

PLUGIN = """
from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_adapters():
    return PluginSpec(kind="adapter", name="arith", factory="nenyax_testsupport.fakes:ArithAdapter", summary="fake")
"""


def _at_a_terminal(args, site):
    """Run the CLI with stdout and stderr on one pseudo-terminal; everything it drew, as text."""
    env = {**os.environ, "PYTHONPATH": str(site), "NENYAX_STRICT_PLUGINS": "0", "COLUMNS": "200", "TERM": "xterm"}
    code, drawn = run_in_terminal([sys.executable, "-m", "nenyax.cli", *args], env, timeout=120)
    assert code == 0, drawn
    return drawn


def test_the_bar_says_how_much_the_run_has_written(tmp_path):
    site = write_distribution(
        tmp_path / "site", "nenyax-arith", "1.0.0", {"arith": "nenyax_arith_plugin"}, {"nenyax_arith_plugin": PLUGIN}
    )
    out = tmp_path / "run"
    drawn = _at_a_terminal(["eval", "arith:add?size=400", "--policy", "reference", "--out", str(out)], site)
    written = (out / "trajectories.jsonl").stat().st_size
    assert "ok 400" in drawn
    assert f"{readable_size(written)} written" in drawn


def test_sizes_read_in_decimal_units():
    assert [readable_size(n) for n in (912, 3_400, 999_999, 249_100_000, 1_200_000_000)] == [
        "912 B",
        "3.4 kB",
        "1.0 MB",
        "249.1 MB",
        "1.2 GB",
    ]
