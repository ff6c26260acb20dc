"""`nenyax serve` run as a user runs it, for the tests that serve an environment and check it back."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def nenyax_serve(uri: str, *, share_reference: bool = True) -> Iterator[str]:
    """Serve `uri` with the `nenyax` beside this interpreter on a free port; yields the server's base URL.

    The server is stopped (SIGTERM) when the block ends.
    """
    nenyax = Path(sys.executable).with_name("nenyax")
    argv = [str(nenyax), "serve", uri, "--port", "0", *(["--share-reference"] if share_reference else [])]
    server = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert server.stdout is not None
        announced = server.stdout.readline()
        found = re.search(r"at (http://\S+) \(WebSocket", announced)
        if found is None:
            rest = server.stdout.read() if server.poll() is not None else ""
            raise AssertionError(f"nenyax serve {uri} did not announce its URL: {announced}{rest}")
        yield found.group(1)
    finally:
        server.terminate()
        server.wait(30)
