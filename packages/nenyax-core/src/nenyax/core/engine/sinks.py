"""The append-only JSONL sink, and its reader: every finished trajectory is on disk the moment it finishes.

A writer killed mid-line leaves a last line without its newline. Both sides agree on what it is: a
line that parses is a whole record (a proper prefix of a JSON object never parses) whose newline
was lost, and is kept; one that does not is cut off, and is left, said so with its size.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, ClassVar

import orjson

from nenyax.core.contract import serde
from nenyax.core.contract.trajectory import Trajectory
from nenyax.core.errors import UsageError

if TYPE_CHECKING:
    from nenyax.core.contract.events import EpisodeEnded

log = logging.getLogger(__name__)


class JsonlSink:
    """Appends trajectories to a JSONL file, one line each, flushed as each is written.

    Opened in append mode so a resumed run never loses what an earlier one recorded. A last line
    cut short by a crash (an episode that was never completely written) is dropped first, so the
    next record does not glue onto it and damage the file; a whole last record that only lost its
    newline gets it back.

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
        start = _last_line_start(reader, end)
        if start is None:
            return
        reader.seek(start)
        tail = reader.read(end - start)
    if _whole(tail):
        file.write(b"\n")
        file.flush()
        return
    file.truncate(start)
    # Info, not a warning: whoever resumes a run reads the file first, and its reader says this already.
    log.info("%s: dropped %s bytes of a cut-off last line before appending.", file.name, f"{end - start:,}")


def _last_line_start(reader: IO[bytes], end: int) -> int | None:
    """Where the file's last line starts, or None when the file ends with a newline."""
    reader.seek(end - 1)
    if reader.read(1) == b"\n":
        return None
    position = end
    while position > 0:  # back in blocks to the last newline
        start = max(0, position - 65536)
        reader.seek(start)
        newline = reader.read(position - start).rfind(b"\n")
        if newline >= 0:
            return start + newline + 1
        position = start
    return 0


def _whole(line: bytes) -> bool:
    try:
        orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return True


def open_sink(sink: JsonlSink | str | Path | None) -> JsonlSink | None:
    """Accept a `JsonlSink`, a path to a JSONL file, or None."""
    if sink is None or isinstance(sink, JsonlSink):
        return sink
    return JsonlSink(sink)


class TrajectoryFile:
    """The trajectories of a JSONL file, read in file order each time it is iterated.

    A last line cut off by a killed writer is left, and counted: `cut_off` is its size in bytes once
    iteration reached the end (0 when the file ended cleanly), `cut_off_note` the sentence to print.
    It is logged as a warning too, unless `warn` is False (a caller that prints the note itself). A
    damaged line anywhere else is an error.
    """

    def __init__(self, path: str | Path, *, warn: bool = True) -> None:
        """Read `path` when iterated."""
        self.path = Path(path)
        self.warn = warn
        self.cut_off = 0

    def __iter__(self) -> Iterator[Trajectory]:
        self.cut_off = 0
        with self.path.open("rb") as file:
            for number, line in enumerate(file, start=1):
                if not line.strip():
                    continue
                try:
                    data = orjson.loads(line)
                except orjson.JSONDecodeError as exc:
                    if not line.endswith(b"\n"):  # the last line, without its newline: cut off
                        self.cut_off = len(line)
                        if self.warn:
                            log.warning("%s", self.cut_off_note)
                        return
                    msg = f"{self.path}:{number} is not valid JSON ({exc}); the file is damaged."
                    raise UsageError(msg) from exc
                yield serde.from_data(data, Trajectory)

    @property
    def cut_off_note(self) -> str | None:
        """``left 1,234 bytes of a cut-off last line in <path>``, or None when nothing was left."""
        if not self.cut_off:
            return None
        return f"left {self.cut_off:,} bytes of a cut-off last line in {self.path} (a writer was killed mid-episode)"


def read_trajectories(path: str | Path, *, warn: bool = True) -> TrajectoryFile:
    """Every complete trajectory of a JSONL file, in order (see `TrajectoryFile` for a cut-off last line)."""
    return TrajectoryFile(path, warn=warn)
