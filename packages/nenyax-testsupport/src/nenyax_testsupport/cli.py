"""Run the ``nenyax`` command as a user would, in a subprocess of this interpreter."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping


def run_nenyax(
    *args: str, env: Mapping[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """``nenyax <args>`` with the embedded model's defaults: no OpenAI or NENYAX_MODEL variables, Hub offline.

    Output is captured as text; the exit code is left for the test to assert.
    """
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "NENYAX_MODEL"))}
    return subprocess.run(
        [sys.executable, "-m", "nenyax.cli", *args],
        capture_output=True,
        text=True,
        env={**base, "HF_HUB_OFFLINE": "1", **(env or {})},
        timeout=timeout,
        check=False,
    )
