"""Which hud is installed, and keeping it offline and quiet inside a Nenyax process.

hud reports every job and trace to its platform, and routes agents through its gateway, whenever a
``HUD_API_KEY`` is set (in the environment, ``./.env`` or ``~/.hud/.env``); without a key nothing is
sent. A Nenyax episode is recorded by Nenyax's own proxy and must not reach any network, so the key
is dropped from hud's settings (read once, at import) for this process.
"""

from __future__ import annotations

import asyncio
import logging
import os
from importlib import metadata

from nenyax.core import UsageError

INSTALL = "pip install 'hud>=0.6.21,<0.7'"
_quieted = False


def installed() -> str:
    """The installed hud's version; without hud 0.6, say how to install it in one sentence."""
    try:
        version = metadata.version("hud")
    except metadata.PackageNotFoundError:
        version = ""
    if not version:
        hint = " ('hud-python' is its old, empty name)" if _has_dist("hud-python") else ""
        msg = f"HUD tasksets need the hud package{hint}: {INSTALL} (Python 3.11 or 3.12)."
        raise UsageError(msg)
    if not version.startswith("0.6."):
        msg = f"Nenyax runs HUD tasksets with hud 0.6 (installed: {version}): {INSTALL}."
        raise UsageError(msg)
    try:
        import hud  # noqa: F401 - the import is the check
    except Exception as exc:  # a broken install (a missing dependency) says so once
        msg = f"hud {version} is installed but does not import ({type(exc).__name__}: {exc}); reinstall it: {INSTALL}."
        raise UsageError(" ".join(msg.split())) from exc
    quiet()
    return version


def _has_dist(name: str) -> bool:
    try:
        metadata.version(name)
    except metadata.PackageNotFoundError:
        return False
    return True


class _ShutdownNoise(logging.Filter):
    """Drops the ``CancelledError`` traceback CPython 3.11 logs when hud's loopback server closes.

    `LocalRuntime` cancels its connection handlers at shutdown; asyncio's stream callback then asks the
    cancelled task for its exception and logs the resulting `CancelledError` as an unhandled error. It
    is harmless (the episode ended), so it must not reach users.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not (isinstance(exc, asyncio.CancelledError) and "StreamReaderProtocol" in record.getMessage())


def quiet() -> None:
    """No key for hud's platform (so no reports, uploads or gateway), no span files, no hud log noise."""
    global _quieted
    from hud.settings import settings

    settings.api_key = None  # every report, upload and gateway route is gated on a key
    settings.telemetry_enabled = False
    settings.cli_analytics_enabled = False
    settings.file_tracking_enabled = False
    # With telemetry off hud still appends spans under ~/.hud/spans unless told a directory; a path that
    # cannot be a directory makes that best-effort write fail quietly, so nothing is written at all.
    settings.telemetry_local_dir = os.devnull
    if _quieted:
        return
    _quieted = True
    logging.getLogger("asyncio").addFilter(_ShutdownNoise())
    # hud logs a failed rollout with its traceback (and its agent's failed model call); Nenyax records
    # each as the episode's status and error, so an unconfigured hud logger stays silent.
    hud_logger = logging.getLogger("hud")
    if hud_logger.level == logging.NOTSET:
        hud_logger.setLevel(logging.CRITICAL)
