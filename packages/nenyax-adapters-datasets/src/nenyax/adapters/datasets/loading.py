"""Loading a local dataset as a `Table` and finding its columns.

CSV, JSON and JSON Lines are read by `textfiles` (values as written); Parquet files and save_to_disk
folders, which carry their own types, by Hugging Face ``datasets``, offline.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from nenyax.adapters.datasets.textfiles import TEXT_SUFFIXES, read_text_file
from nenyax.core.errors import BadURIError, did_you_mean

if TYPE_CHECKING:
    import datasets

# No Hub is reachable here, and a local path must never turn into a Hub lookup that retries DNS for
# half a minute: offline mode makes datasets fail fast and never leave the machine. Set before the
# first import of datasets/huggingface_hub, which read these variables once.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"

BUILDERS = {".jsonl": "json", ".json": "json", ".parquet": "parquet", ".csv": "csv"}
"""File suffix -> the datasets builder that reads it."""
PROMPT_COLUMNS = ("question", "prompt", "problem", "input", "query")
ANSWER_COLUMNS = ("answer", "solution", "target", "output", "label")
CHOICE_COLUMNS = ("choices", "options")
"""Columns holding a task's options, looked for under ``judge=choice``."""


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()).rstrip(".") or type(exc).__name__


MISSING = object()
"""A column's value in a row that lacks the column (a JSON row without the key, a short CSV record)."""


@attrs.frozen
class Table:
    """One split of a dataset: its columns and rows, and where each row is in the file."""

    name: str
    """The file or folder name, for sentences."""
    split: str
    columns: tuple[str, ...]
    size: int
    rows: Any = attrs.field(repr=False)
    """A list of dicts (text files) or a `datasets.Dataset`: both give a row's dict by index."""
    lines: Sequence[int] | None = attrs.field(default=None, repr=False)
    """Each row's first line in the file (CSV, JSON Lines), or None."""

    def column(self, name: str) -> list[Any]:
        """Every row's value in `name`, in file order; `MISSING` where a row lacks it."""
        if isinstance(self.rows, list):
            return [row.get(name, MISSING) for row in self.rows]
        return list(self.rows[name])

    def where(self, index: int) -> str:
        """Where row `index` is, for a sentence: ``line 4 of qa.csv``, else ``row 3 of qa.parquet`` (from 0)."""
        if self.lines is not None:
            return f"line {self.lines[index]} of {self.name}"
        return f"row {index} of {self.name}"


def load_table(path: Path, split: str | None) -> Table:
    """The split `split` (default: ``train``, else the only or first one) of the dataset at `path`."""
    path = _existing(path)
    if path.is_file() and path.suffix.lower() in TEXT_SUFFIXES:
        if split not in (None, "train"):
            msg = f"{str(path)!r} has no split {split!r}." + did_you_mean(split, ["train"], "split")
            raise BadURIError(msg)
        columns, rows, lines = read_text_file(path)
        if not rows:
            msg = f"{str(path)!r} has no rows."
            raise BadURIError(msg)
        return Table(name=path.name, split="train", columns=tuple(columns), size=len(rows), rows=rows, lines=lines)
    dataset, chosen = load_local(path, split)
    return Table(name=path.name, split=chosen, columns=tuple(dataset.column_names), size=len(dataset), rows=dataset)


def _existing(path: Path) -> Path:
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
    return path


def load_local(path: Path, split: str | None) -> tuple[datasets.Dataset, str]:
    """The split `split` of a Parquet file or save_to_disk folder, read by ``datasets``."""
    import datasets

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
        if isinstance(cause, StopIteration) or "corresponds to no data" in str(cause):
            msg = f"{str(path)!r} has no rows."
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


def pick_column(columns: Sequence[str], named: str | None, defaults: tuple[str, ...], role: str, key: str) -> str:
    """The column named `named`, else the first of `defaults` present; else a sentence listing the columns."""
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
