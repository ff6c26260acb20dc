"""Server-sent events, parsed as the WHATWG spec says (the ORS ``/call`` and ``/create_session`` replies).

Framing only: which events mean what is the wire module's business. The reference client splits
each line on its first ``:`` and crashes on one without; the spec reads such a line as a field name
with an empty value, and so does this parser.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import attrs


@attrs.frozen
class Event:
    """One dispatched event: its type (``message`` when the stream named none) and its data lines joined."""

    event: str
    data: str


class MalformedStream(Exception):
    """The bytes are not a server-sent event stream (e.g. not UTF-8)."""


class EventParser:
    """Feed it bytes as they arrive; it yields each event once the blank line ending it is read."""

    def __init__(self) -> None:
        """Start with an empty buffer and no pending event."""
        self._buffer = b""
        self._event = ""
        self._data: list[str] = []
        self._pending_cr = False

    def feed(self, chunk: bytes) -> Iterator[Event]:
        """Consume `chunk`; yield every event it completes."""
        if self._pending_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]  # the \n of a \r\n split across two chunks
        self._pending_cr = chunk.endswith(b"\r")
        self._buffer += chunk
        # Lines end in \r\n, \n or a lone \r; normalise before splitting so each line is seen once.
        lines = self._buffer.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        self._buffer = lines.pop()
        for raw in lines:
            event = self._line(raw)
            if event is not None:
                yield event

    def _line(self, raw: bytes) -> Event | None:
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            msg = f"a line of the event stream is not UTF-8 ({raw[:60]!r})"
            raise MalformedStream(msg) from exc
        if not line:
            if not self._data and not self._event:
                return None
            event = Event(event=self._event or "message", data="\n".join(self._data))
            self._event, self._data = "", []
            return event
        if line.startswith(":"):
            return None  # a comment: sse-starlette's keep-alive pings
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        # id and retry steer browser reconnection; ORS resumes by task_id instead, so they are ignored.
        return None


async def read_events(chunks: AsyncIterator[bytes]) -> AsyncIterator[Event]:
    """Every event of a byte stream, in order; an unterminated last event is dropped, as the spec says."""
    parser = EventParser()
    async for chunk in chunks:
        for event in parser.feed(chunk):
            yield event
