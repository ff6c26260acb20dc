"""The append-only JSONL sink: every finished trajectory is on disk the moment it finishes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, ClassVar

import orjson

from nenyax.core.contract import serde
from nenyax.core.contract.trajectory import Trajectory
from nenyax.core.errors import UsageError

if TYPE_CHECKING:
    from nenyax.core.contract.events import EpisodeEnded


class JsonlSink:
    """Appends trajectories to a JSONL file, one line each, flushed as each is written.

    Opened in append mode so a resumed run never loses what an earlier one recorded. A last line
    cut short by a crash (no newline: an episode that was never completely written) is dropped
    first, so the next record does not glue onto it and damage the file.

    It is an observer of the episode stream (`nenyax.core.contract.events`): every episode that ends
    is written once, as it ends. It is essential: a write that fails stops the run.
    """

    essential: ClassVar[bool] = True
    """A failed write stops the run (the record could not be kept); other observers' failures are logged."""

    def __init__(self, path: str | Path) -> None:
        """Open (or create) `path` for appending."""
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[bytes] = self.path.open("ab")
        _drop_cut_last_line(self._file)
        self.written = 0

    def write(self, trajectory: Trajectory) -> None:
        """Append one trajectory and flush it to the OS, so a crash after this call loses nothing."""
        self._file.write(serde.dumps(trajectory) + b"\n")
        self._file.flush()
        self.written += 1

    def on_episode_ended(self, event: EpisodeEnded) -> None:
        """Write the ended episode's trajectory."""
        self.write(event.trajectory)

    def close(self) -> None:
        """Close the file."""
        self._file.close()

    def __enter__(self) -> JsonlSink:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _drop_cut_last_line(file: IO[bytes]) -> None:
    end = file.seek(0, 2)
    if end == 0:
        return
    with open(file.name, "rb") as reader:
        reader.seek(max(0, end - 1))
        if reader.read(1) == b"\n":
            return
        # Scan back in blocks for the last complete line.
        position = end
        while position > 0:
            start = max(0, position - 65536)
            reader.seek(start)
            block = reader.read(position - start)
            newline = block.rfind(b"\n")
            if newline >= 0:
                file.truncate(start + newline + 1)
                return
            position = start
    file.truncate(0)


def open_sink(sink: JsonlSink | str | Path | None) -> JsonlSink | None:
    """Accept a Sink, a path to a JSONL file, or None."""
    if sink is None or isinstance(sink, JsonlSink):
        return sink
    return JsonlSink(sink)


def read_trajectories(path: str | Path) -> Iterator[Trajectory]:
    """Read every complete trajectory from a JSONL file.

    A final line cut short by a crash is skipped; a corrupt line elsewhere is an error.
    """
    lines = Path(path).read_bytes().split(b"\n")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            if number == len(lines):  # the last line of a file without a trailing newline
                return
            msg = f"{path}:{number} is not valid JSON ({exc}); the file is damaged."
            raise UsageError(msg) from exc
        yield serde.from_data(data, Trajectory)


Sink = JsonlSink
"""The name `Sink` (used before the sink module was named for what it writes)."""
