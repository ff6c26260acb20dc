"""The fake `arith` adapter installed as a distribution on disk, shared by the CLI's tests.

nenyax-cli's tests install no real adapter (the CLI depends on core alone): the adapter is core's
in-memory fake, registered by entry point as a real plugin is; tests/ runs the CLI on real ones.
"""

import pytest

from nenyax.testing.suites.isolation import own_checks_dir  # noqa: F401 - autouse: no test writes the user's tier cache
from nenyax_testsupport.distributions import write_distribution

# What `nenyax new-plugin` writes, kept to compare with (test_new_plugin.py): a plugin's tests, not ours to run.
collect_ignore = ["golden"]

ARITH_PLUGIN = """
from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_adapters():
    return PluginSpec(kind="adapter", name="arith", factory="nenyax_testsupport.fakes:ArithAdapter", summary="fake")
"""


@pytest.fixture(scope="session")
def site(tmp_path_factory):
    """A folder to put on PYTHONPATH: the `nenyax-arith` 1.0 distribution with its entry point."""
    return write_distribution(
        tmp_path_factory.mktemp("site"),
        "nenyax-arith",
        "1.0",
        {"arith": "nenyax_arith_plugin"},
        {"nenyax_arith_plugin": ARITH_PLUGIN},
    )
