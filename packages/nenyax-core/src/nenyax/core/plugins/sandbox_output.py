"""One command's output stream as it arrives, for sandbox backends: bounded as `bounded_text` bounds
it, and cut into lines for an ``on_output`` callback.

A command may print gigabytes; only the head and the tail are ever held (not the whole stream, then cut).
"""

from __future__ import annotations

from nenyax.core.plugins.sandbox import ExecResult, OutputCallback, bounded_text


class OutputCapture:
    """The head (`limit` // 2 bytes) and a rolling tail of one stream, with the total seen."""

    def __init__(self, name: str, limit: int, on_output: OutputCallback | None = None) -> None:
        self.name, self.limit, self.on_output = name, max(limit, 2), on_output
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self._line = bytearray()

    def feed(self, data: bytes) -> None:
        """Keep what the bound allows of `data`, and hand `on_output` each line it completes."""
        if self.on_output is not None:
            self._line += data
            while (cut := self._line.find(b"\n")) >= 0:
                line, self._line = bytes(self._line[: cut + 1]), self._line[cut + 1 :]
                self.on_output(self.name, line.decode(errors="replace"))
        self.total += len(data)
        room = self.limit // 2 - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        self.tail += data
        excess = len(self.tail) - (self.limit - self.limit // 2)
        if excess > 0:
            del self.tail[:excess]

    def flush(self) -> None:
        """The stream ended: a last line without its newline goes to `on_output` too."""
        if self.on_output is not None and self._line:
            self.on_output(self.name, self._line.decode(errors="replace"))
            self._line = bytearray()

    def data(self) -> bytes:
        """Every byte seen (only whole when nothing was cut: for tar streams, which are never bounded)."""
        return bytes(self.head) + bytes(self.tail)

    def text(self) -> tuple[str, bool]:
        """The stream as `bounded_text` gives it, and whether it was cut."""
        if self.total <= self.limit:
            return bounded_text(self.data(), self.limit)
        cut = self.total - len(self.head) - len(self.tail)
        head, tail = self.head.decode(errors="replace"), self.tail.decode(errors="replace")
        return f"{head}\n[... {cut} bytes cut ...]\n{tail}", True


def captured_result(
    code: int, out: OutputCapture, err: OutputCapture, *, timed_out: bool, duration: float
) -> ExecResult:
    """The `ExecResult` of a command whose two streams were captured (each bounded, `truncated` said)."""
    stdout, cut_out = out.text()
    stderr, cut_err = err.text()
    return ExecResult(
        exit_code=code,
        stdout=stdout,
        stderr=stderr,
        timed_out=timed_out,
        duration=duration,
        truncated=cut_out or cut_err,
    )
