"""Running a function with a time limit from any thread, without signals or a subprocess.

math-verify's own timeout is ``signal.alarm``, which works only in the main thread: called from a
worker thread (``run_sync`` inside Jupyter, a thread pool, Ray) ``parse`` raises ``ValueError``
("doesn't support threaded environment"). So its timeouts are switched off, and here the function
runs in a fresh daemon thread while the caller waits on an event, which works in every thread and
inside a running event loop.

When time is up the caller gets `DeadlineExceeded` at once, and the worker is asked to stop: an
exception is raised inside it asynchronously (``PyThreadState_SetAsyncExc``), which lands at its
next Python instruction. sympy is Python, so a slow simplification stops within milliseconds. A
single long C operation (one giant integer power) cannot be interrupted in-process at all, and it
holds the GIL: callers must refuse such inputs before calling (see `mathguard`).
"""

from __future__ import annotations

import ctypes
import sys
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar, cast

T = TypeVar("T")

THREAD_NAME = "nenyax-judge-deadline"
"""Name of the worker threads (tests look for leftovers by it)."""


class DeadlineExceeded(Exception):
    """The function did not finish within its time limit."""


class _Stop(BaseException):
    """Raised inside an overdue worker. A BaseException, so libraries' ``except Exception`` lets it through."""


STOP_RETRIES = 200
"""Times an overdue worker is asked to stop, 50 ms apart, before it is left to finish on its own."""


_quiet = threading.Lock()
_quieted = False


def _hide_swallowed_stops() -> None:
    """Python reports a stop swallowed by a finalizer as "Exception ignored in ...": noise, not news, since
    the stop is sent again. Installed once, at the first stop, chaining to the hook in place then.
    """
    global _quieted
    with _quiet:
        if _quieted:
            return
        previous = sys.unraisablehook

        def hook(unraisable: Any) -> None:
            if not isinstance(unraisable.exc_value, _Stop):
                previous(unraisable)

        sys.unraisablehook = hook
        _quieted = True


def _interrupt(thread_id: int) -> None:
    _hide_swallowed_stops()
    set_async_exc = getattr(ctypes.pythonapi, "PyThreadState_SetAsyncExc", None)
    if set_async_exc is not None:  # CPython; elsewhere the abandoned worker simply runs to its end
        set_async_exc(ctypes.c_ulong(thread_id), ctypes.py_object(_Stop))


class _Job(Generic[T]):
    """One call in its worker thread, and what it left."""

    def __init__(self, fn: Callable[[], T]) -> None:
        self.fn = fn
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.finished = False  # set under `lock`: no stop is sent to a worker that left fn
        self.value: T | None = None  # fn's value once it returned
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._work, name=THREAD_NAME, daemon=True)

    def _work(self) -> None:
        try:
            try:
                self.value = self.fn()
            except BaseException as exc:  # noqa: BLE001 - handed to the caller, who re-raises it, whatever it is
                self.error = exc
            finally:
                with self.lock:
                    self.finished = True
                self.done.set()
        except _Stop:  # the stop arrived as fn returned: nothing is left to stop
            self.done.set()

    def stop(self) -> bool:
        """Ask the worker to stop if it is still inside fn; False once it has left."""
        with self.lock:
            if self.finished or self.thread.ident is None:
                return False
            _interrupt(self.thread.ident)
            return True

    def reap(self) -> None:
        """Keep asking until the worker stops: a stop that lands in a finalizer or weakref callback is
        swallowed there (Python prints "Exception ignored"), and the next one lands in fn.
        """
        for _ in range(STOP_RETRIES):
            if not self.stop():
                return
            self.thread.join(0.05)
            if not self.thread.is_alive():
                return


def call_with_deadline(fn: Callable[[], T], seconds: float) -> T:
    """``fn()``, or `DeadlineExceeded` after `seconds`; exceptions from `fn` propagate unchanged."""
    job = _Job(fn)
    job.thread.start()
    if not job.done.wait(seconds) and job.stop():
        threading.Thread(target=job.reap, name=f"{THREAD_NAME}-reaper", daemon=True).start()
        msg = f"took longer than {seconds:g} s"
        raise DeadlineExceeded(msg)
    job.done.wait()  # finished in time, or just now as time ran out: its outcome stands
    if job.error is not None:
        raise job.error
    return cast("T", job.value)  # fn returned: the value is its own, None included
