"""Child processes that get Ctrl-C as a foreground command does, whoever started the test run.

A command started in the background by a non-interactive shell (``nox ... &``, some CI runners)
inherits SIGINT *ignored*, and Python then installs no KeyboardInterrupt handler in its children:
a test's SIGINT would do nothing. Pass `foreground_sigint` as ``preexec_fn`` to restore the default.
"""

from __future__ import annotations

import signal


def foreground_sigint() -> None:
    """In the child, before exec: SIGINT back to its default, so Python turns it into KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
