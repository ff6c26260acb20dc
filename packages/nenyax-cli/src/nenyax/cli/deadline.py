"""`--timeout` for a whole command: a timer that interrupts the main thread as Ctrl-C would.

The clock starts with the command (`nenyax.cli.main`'s group starts it), so the time spent importing an
adapter, loading an environment or an embedded model counts too.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from nenyax.core import NenyaxError

GRACE_S = 2.0
"""How long past the episode's own timeout the command may take to record and close it."""


_started: float | None = None
"""When the running command started (`time.monotonic`); None outside a command."""


def start_clock() -> None:
    """Start the running command's clock now."""
    global _started
    _started = time.monotonic()


def remaining(seconds: float | None) -> float | None:
    """What is left of `seconds` since the command started (None: no limit); never below a tenth of a second,
    so an episode started late still gets a timeout of its own rather than none."""
    if seconds is None:
        return None
    spent = 0.0 if _started is None else time.monotonic() - _started
    return max(0.1, seconds - spent)


class CommandTimeout(NenyaxError):
    """The whole command ran past --timeout (exit 1: it ran, and did not finish in time)."""

    exit_code = 1


@contextmanager
def command_deadline(seconds: float | None, grace: float = GRACE_S) -> Iterator[None]:
    """Bound the command to `seconds` (+ `grace`) from its start: then interrupt it and raise `CommandTimeout`.

    The episode's own timeout (`remaining`) normally fires first and records the episode as ``timeout``;
    this is the backstop for work no episode timer reaches (loading, judging, a close that hangs).
    """
    if seconds is None:
        yield
        return
    fired = threading.Event()
    # A SIGINT does nothing while it is ignored, as it is for a command started in the
    # background by a non-interactive shell (`nenyax check ... &`, nohup, some CI runners): the
    # timeout must fire there too, so SIGINT is Python's own for the command's duration.
    ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    if ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)

    def fire() -> None:
        fired.set()
        # A real SIGINT to the main thread, as Ctrl-C sends: asyncio.run cancels its task, plain code raises,
        # and a blocking call (a sleep, a socket read, a load waiting on I/O) is woken to raise too, which
        # `_thread.interrupt_main` (a flag checked between bytecodes) cannot do.
        main = threading.main_thread().ident
        if main is not None:
            signal.pthread_kill(main, signal.SIGINT)

    timer = threading.Timer(max(0.0, (remaining(seconds) or 0.0) + grace), fire)
    timer.daemon = True
    timer.start()
    try:
        yield
    except KeyboardInterrupt as exc:
        if fired.is_set():
            msg = f"The command did not finish within its --timeout of {seconds:g} s."
            raise CommandTimeout(msg) from exc
        raise
    finally:
        timer.cancel()
        if ignored:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
