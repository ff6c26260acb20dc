"""lm-eval's progress bars silenced while the adapter loads a task or plays a document.

lm-eval draws a bar per request-building pass (one per episode: some 110 lines on stderr per `nenyax check`),
and `datasets` one per split it generates: noise to a Nenyax user, who sees episodes, not lm-eval's passes.
Only bars are silenced, and only inside `quiet()`: lm-eval's logged warnings and errors still reach stderr.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_MODULES = ("lm_eval.api.task", "lm_eval.api.model")
"""lm-eval's modules that draw bars on the adapter's path (others loaded by then are silenced too)."""

_lock = threading.Lock()
_depth = 0
_saved: dict[str, Any] = {}
_datasets_silenced = False


def _silence() -> None:
    global _datasets_silenced
    from tqdm import tqdm

    for name in _MODULES:
        importlib.import_module(name)
    quiet_bar = functools.partial(tqdm, disable=True)
    for name, module in list(sys.modules.items()):
        if (name == "lm_eval" or name.startswith("lm_eval.")) and getattr(module, "tqdm", None) is tqdm:
            _saved[name] = tqdm
            module.tqdm = quiet_bar  # type: ignore[attr-defined]
    # A user's own HF_DATASETS_DISABLE_PROGRESS_BARS is theirs to keep: `datasets` is left alone then.
    if "HF_DATASETS_DISABLE_PROGRESS_BARS" not in os.environ:
        from datasets.utils.tqdm import are_progress_bars_disabled, disable_progress_bars

        if not are_progress_bars_disabled():
            disable_progress_bars()
            _datasets_silenced = True


def _restore() -> None:
    global _datasets_silenced
    for name, bar in _saved.items():
        if (module := sys.modules.get(name)) is not None:
            module.tqdm = bar  # type: ignore[attr-defined]
    _saved.clear()
    if _datasets_silenced:
        from datasets.utils.tqdm import enable_progress_bars

        enable_progress_bars()
        _datasets_silenced = False


@contextmanager
def quiet() -> Iterator[None]:
    """lm-eval's and `datasets`' progress bars off inside, as they were after (nested and thread-safe)."""
    global _depth
    with _lock:
        if _depth == 0:
            try:
                _silence()
            except BaseException:
                _restore()
                raise
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                _restore()
