"""Run a command with its stdout and stderr on a real pseudo-terminal, as a person at a terminal would.

What a command draws only for a person (progress bars, spinners, colour) can be tested this way.
POSIX only (the `pty` module).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence


def run_in_terminal(argv: Sequence[str], env: Mapping[str, str], timeout: float = 300) -> tuple[int, str]:
    """Run `argv` on a fresh pseudo-terminal; return its exit code and everything it wrote there."""
    import pty

    leader, follower = pty.openpty()
    proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=follower, stderr=follower, env=dict(env))
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # EIO: the command closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    return proc.wait(timeout=timeout), b"".join(chunks).decode(errors="replace")
