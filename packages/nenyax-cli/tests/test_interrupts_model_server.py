"""Ctrl-C stops every command that calls a model, whatever the model server does: a real loopback socket.

Each server is a real listening socket on port 0 that accepts, reads the request, then stays silent,
answers a byte every half second, or sends its headers and half a body and stops. The CLI runs in a real
subprocess, gets a real SIGINT once the server has a connection, and must exit 130 within about 2 s.
"""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from nenyax_testsupport.signals import foreground_sigint

HEADERS = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n"


class Server:
    """A loopback socket that accepts and answers as `behaviour` says (silent, slow or half)."""

    def __init__(self, behaviour):
        self.behaviour = behaviour
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.connected = threading.Event()
        self.conns = []
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.closed:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn):
        with contextlib.suppress(OSError):
            conn.recv(65536)
            self.connected.set()
            if self.behaviour == "half":
                conn.sendall(HEADERS + b'{"choices": [{"message": {"content": "')
            elif self.behaviour == "slow":
                conn.sendall(HEADERS)
                while not self.closed:
                    conn.sendall(b" ")
                    time.sleep(0.5)

    def close(self):
        self.closed = True
        self.sock.close()
        for conn in self.conns:
            conn.close()


COMMANDS = {
    "try": ["try", "arith:add"],
    "eval": ["eval", "arith:add", "--out", "{tmp}/run"],
    "check": ["check", "arith:add"],
}


@pytest.mark.parametrize("behaviour", ["silent", "slow", "half"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_ctrl_c_stops_a_command_whose_model_server_does_not_answer(site, tmp_path, command, behaviour):
    server = Server(behaviour)
    args = [a.replace("{tmp}", str(tmp_path)) for a in COMMANDS[command]]
    url = f"http://127.0.0.1:{server.port}/v1"
    env = {**os.environ, "PYTHONPATH": str(site), "NENYAX_STRICT_PLUGINS": "0"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "nenyax.cli", *args, "--model", "openai:m", "--base-url", url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=foreground_sigint,
    )
    try:
        assert server.connected.wait(60), proc.communicate(timeout=30) if proc.poll() is not None else "no call"
        time.sleep(0.3)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            pytest.fail(f"`nenyax {command}` did not stop within 30 s of Ctrl-C")
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
        server.close()
    assert proc.returncode == 130, err
    assert took < 2.5, took
    assert "Traceback" not in err
    assert "Interrupted" in err
