"""Loading a local dataset with Hugging Face ``datasets``, offline, and finding its columns."""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any

from nenyax.core.errors import BadURIError, did_you_mean

# No Hub is reachable here, and a local path must never turn into a Hub lookup that retries DNS for
# half a minute: offline mode makes datasets fail fast and never leave the machine. Set before the
# first import of datasets/huggingface_hub, which read these variables once.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"

import datasets

BUILDERS = {".jsonl": "json", ".json": "json", ".parquet": "parquet", ".csv": "csv"}
"""File suffix -> the datasets builder that reads it."""
PROMPT_COLUMNS = ("question", "prompt", "problem", "input", "query")
ANSWER_COLUMNS = ("answer", "solution", "target", "output", "label")


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()).rstrip(".") or type(exc).__name__


def _first_bad_jsonl_line(path: Path) -> tuple[int, str] | None:
    """(line number, why) of the first non-blank line of a JSONL file that is not a JSON object."""
    try:
        with path.open(encoding="utf-8") as lines:
            for number, line in enumerate(lines, start=1):
                if not line.strip():
                    continue
                try:
                    value = json.loads(line.rstrip("\r\n"))
                except json.JSONDecodeError as exc:
                    return number, f"{exc.msg} at column {exc.colno}"
                if not isinstance(value, dict):
                    kind = {list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
                    return number, f"{kind.get(type(value), 'null')}, not an object"
    except (OSError, UnicodeDecodeError) as exc:
        return 0, _one_line(exc)
    return None


def load_local(path: Path, split: str | None) -> tuple[datasets.Dataset, str]:
    """The split `split` (default: ``train``, else the only or first one) of the dataset at `path`."""
    try:
        path = path.expanduser()
        exists = path.exists()
    except (OSError, RuntimeError) as exc:  # an unknown ~user, a name too long for the filesystem
        msg = f"Cannot use the path {str(path)[:80]!r}: {_one_line(exc)}."
        raise BadURIError(msg) from exc
    if not exists:
        msg = (
            f"No file or directory at {str(path)!r}; give the path of a .jsonl, .json, .parquet or .csv file "
            "or of a save_to_disk folder."
        )
        raise BadURIError(msg)
    # datasets draws a progress bar per build; a CLI run or a test log is no place for it.
    bars = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()
    # datasets also logs a failed read before raising it; the one sentence below says it already.
    logger = logging.getLogger("datasets")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        if path.is_dir():
            if not any((path / name).exists() for name in ("dataset_dict.json", "dataset_info.json", "state.json")):
                msg = (
                    f"{str(path)!r} is a folder but not one written by save_to_disk "
                    "(it has no dataset_dict.json or state.json)."
                )
                raise BadURIError(msg)
            loaded: Any = datasets.load_from_disk(str(path))
        else:
            builder = BUILDERS.get(path.suffix.lower())
            if builder is None:
                kinds = ", ".join(BUILDERS)
                msg = f"Cannot read {path.name!r}: the hf adapter reads {kinds} files and save_to_disk folders."
                raise BadURIError(msg)
            loaded = datasets.load_dataset(builder, data_files={"train": str(path)})
    except BadURIError:
        raise
    except Exception as exc:  # a malformed file: datasets' own reason, in one sentence
        # datasets hides the cause of a failed build behind a generic message; the cause says more.
        cause = exc.__cause__ if exc.__cause__ is not None and "generating the dataset" in str(exc) else exc
        bad = _first_bad_jsonl_line(path) if path.suffix.lower() == ".jsonl" else None
        if isinstance(cause, StopIteration) or "corresponds to no data" in str(cause):
            msg = f"{str(path)!r} has no rows."
        elif bad is not None:  # datasets gives a byte position in a block; a line number is what an editor needs
            msg = f"{path}:{bad[0]} is not a JSON object ({bad[1]}); fix that line of the JSONL file."
        else:
            msg = f"datasets could not read {str(path)!r}: {_one_line(cause)}."
        raise BadURIError(msg) from exc
    finally:
        logger.setLevel(level)
        if bars:
            datasets.enable_progress_bars()
    if isinstance(loaded, datasets.Dataset):
        if len(loaded) == 0:
            msg = f"{str(path)!r} has no rows."
            raise BadURIError(msg)
        if split not in (None, "train"):
            msg = f"{str(path)!r} holds a single split ('train'), not {split!r}."
            raise BadURIError(msg)
        return loaded, "train"
    names = list(loaded)
    chosen = split or ("train" if "train" in names else names[0])
    if chosen not in names:
        msg = f"{str(path)!r} has no split {chosen!r}." + did_you_mean(chosen, names, "split")
        raise BadURIError(msg)
    return loaded[chosen], chosen


def pick_column(dataset: datasets.Dataset, named: str | None, defaults: tuple[str, ...], role: str, key: str) -> str:
    """The column named `named`, else the first of `defaults` present; else a sentence listing the columns."""
    columns = list(dataset.column_names)
    if named is not None:
        if named not in columns:
            msg = f"The dataset has no {role} column {named!r}; its columns are {', '.join(columns)}."
            raise BadURIError(msg)
        return named
    for candidate in defaults:
        if candidate in columns:
            return candidate
    msg = f"No {role} column found among {', '.join(columns)}; name it with ?{key}=<column>."
    raise BadURIError(msg)


def content_digest(path: Path) -> str:
    """A sha256 of what the dataset holds (file bytes, or a save_to_disk folder's data files), for the manifest."""
    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for file in files:
        digest.update(str(file.relative_to(path) if path.is_dir() else file.name).encode())
        with file.open("rb") as handle:
            for block in iter(functools.partial(handle.read, 1 << 20), b""):
                digest.update(block)
    return "sha256:" + digest.hexdigest()
