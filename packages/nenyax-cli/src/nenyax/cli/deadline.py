"""`--timeout` for a whole command: a timer that interrupts the main thread as Ctrl-C would."""

from __future__ import annotations

import _thread
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from nenyax.core import NenyaxError

GRACE_S = 2.0
"""How long past the episode's own timeout the command may take to record and close it."""


class CommandTimeout(NenyaxError):
    """The whole command ran past --timeout (exit 1: it ran, and did not finish in time)."""

    exit_code = 1


@contextmanager
def command_deadline(seconds: float | None, grace: float = GRACE_S) -> Iterator[None]:
    """Bound the body to `seconds` (+ `grace`): then interrupt it and raise `CommandTimeout`.

    The episode's own timeout normally fires first and records the episode as ``timeout``; this is
    the backstop for work no episode timer reaches (loading, judging, a close that hangs).
    """
    if seconds is None:
        yield
        return
    fired = threading.Event()
    # `interrupt_main` does nothing while SIGINT is ignored, as it is for a command started in the
    # background by a non-interactive shell (`nenyax check ... &`, nohup, some CI runners): the
    # timeout must fire there too, so SIGINT is Python's own for the command's duration.
    ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    if ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)

    def fire() -> None:
        fired.set()
        _thread.interrupt_main()  # lands like Ctrl-C: asyncio.run cancels its task, plain code raises

    timer = threading.Timer(seconds + grace, fire)
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
