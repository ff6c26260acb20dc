"""Leaving after Ctrl-C within a bounded time, whatever thread is still blocked."""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import threading
import time

GRACE_S = 0.5
"""Seconds an interrupted command waits for its other threads before it leaves without them."""


def leave(code: int) -> None:
    """Exit with `code` now if another thread would hold the interpreter's exit; return if none would.

    The interpreter joins every non-daemon thread on exit (an executor's thread blocked on a socket that
    never answers, or on a subprocess still importing), so Ctrl-C would wait as long as that call blocks.
    Each gets `GRACE_S` to end; then the exit handlers run (they stop the subprocesses this process
    started) and the process leaves without joining the rest.
    """
    deadline = time.monotonic() + GRACE_S
    for thread in threading.enumerate():
        if thread is threading.main_thread() or thread.daemon:
            continue
        thread.join(timeout=max(0.0, deadline - time.monotonic()))
    if not any(t.is_alive() and not t.daemon and t is not threading.main_thread() for t in threading.enumerate()):
        return
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more can be said
            stream.flush()
    os._exit(code)
