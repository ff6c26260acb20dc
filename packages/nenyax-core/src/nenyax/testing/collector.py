"""A collector on this machine's loopback that receives OTLP/HTTP as a real one does, for tests and the tracer kit.

It records each POST (path, headers, body: gzip and deflate undone) and answers with the status it was
given: 200 and an empty ``ExportTraceServiceResponse`` (whose protobuf encoding is no bytes at all), or
an error a collector refusing the request would send. It decodes nothing, so it needs no
``opentelemetry-proto``; a span's name is in the body as it is (protobuf and JSON keep strings whole).
"""

from __future__ import annotations

import gzip
import http.server
import socket
import threading
import zlib
from types import TracebackType

import attrs


@attrs.frozen
class Received:
    """One POST the collector received."""

    path: str
    headers: dict[str, str]
    body: bytes
    """As sent, decompressed."""


class Collector:
    """``with Collector() as c:`` an OTLP/HTTP collector at ``c.url`` (``http://127.0.0.1:PORT``)."""

    def __init__(self, status: int = 200) -> None:
        """`status`: what every POST is answered with (401: a collector refusing the key)."""
        self.status = status
        self.requests: list[Received] = []
        self._lock = threading.Lock()
        self._server: http.server.ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        """The collector's base URL (OTLP's ``OTEL_EXPORTER_OTLP_ENDPOINT``)."""
        assert self._server is not None, "the collector is not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def holds(self, text: str) -> bool:
        """True when some request's body contains `text` (a span's name)."""
        with self._lock:
            return any(text.encode() in r.body for r in self.requests)

    def __enter__(self) -> Collector:
        collector = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                encoding = self.headers.get("Content-Encoding", "")
                if encoding == "gzip":
                    body = gzip.decompress(body)
                elif encoding == "deflate":
                    body = zlib.decompress(body)
                with collector._lock:
                    collector.requests.append(Received(path=self.path, headers=dict(self.headers), body=body))
                self.send_response(collector.status)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass  # a test's output is no place for an access log

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


def closed_port() -> int:
    """A loopback port nothing listens on: a collector that is down (connections are refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port
