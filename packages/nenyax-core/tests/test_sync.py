"""`run_on_fresh_thread`: the work runs on a thread of its own, which is gone when the call returns."""

from __future__ import annotations

import threading

import pytest

from nenyax.core.engine.sync import run_on_fresh_thread


def test_returns_the_result_from_a_thread_that_has_ended():
    seen: list[threading.Thread] = []

    def work() -> int:
        seen.append(threading.current_thread())
        return 42

    assert run_on_fresh_thread(work, name="probe") == 42
    (thread,) = seen
    assert thread is not threading.current_thread()
    assert thread.name == "probe"
    assert not thread.is_alive()


def test_what_the_work_raised_reaches_the_caller():
    def work() -> None:
        msg = "no weights here"
        raise FileNotFoundError(msg)

    with pytest.raises(FileNotFoundError, match="no weights here"):
        run_on_fresh_thread(work)
