"""Did-you-mean: the sentence an error adds when a name is unknown (one implementation, core's own)."""

from __future__ import annotations

from pathlib import PurePath

from nenyax.core.errors import did_you_mean, did_you_mean_pool

__all__ = ["did_you_mean", "did_you_mean_pool", "uri_for_path"]

# A file given where a URI goes, by its suffix: the format that reads it and what it is read as. `.json`
# may also be a HUD taskset (`hud:`), named after it; a harbor task is a folder, not a file.
_FORMAT_OF_SUFFIX: dict[str, tuple[str, str]] = {
    ".jsonl": ("hf", "a local dataset file"),
    ".json": ("hf", "a local dataset file; a HUD taskset file is {hud}"),
    ".csv": ("hf", "a local dataset file"),
    ".parquet": ("hf", "a local dataset file"),
    ".yaml": ("lm_eval", "an lm-eval task file"),
    ".yml": ("lm_eval", "an lm-eval task file"),
}


def uri_for_path(text: str) -> str:
    """A sentence suffix naming the URI that reads `text`, a file path written without a format
    (``./qa.jsonl`` -> ``hf:./qa.jsonl``), or an empty string when `text` names no file of a known kind."""
    suffix = PurePath(text.strip().partition("?")[0]).suffix.lower()
    if suffix not in _FORMAT_OF_SUFFIX:
        return ""
    fmt, what = _FORMAT_OF_SUFFIX[suffix]
    given = text.strip()
    return f" Did you mean {fmt + ':' + given!r} ({what.format(hud=repr('hud:' + given))})?"
