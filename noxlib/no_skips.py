"""A pytest plugin (``-p noxlib.no_skips``): a run in which any test skipped fails.

The `together` session plays one chosen test of each adapter's suite with every distribution installed; a
skip there (a library that did not import, a server that did not start) would hide the very break it is
there to show.
"""

from __future__ import annotations

import pytest

_skipped: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped:
        _skipped.append(report.nodeid)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _skipped and exitstatus == pytest.ExitCode.OK:
        print(f"\nno_skips: {', '.join(_skipped)} skipped, which this run does not allow.")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
