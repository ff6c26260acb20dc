"""The real `nenyax serve` command: serves, plays with OpenEnv's client, shuts down on SIGTERM / SIGINT."""

import asyncio
import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest
from openenv.core import GenericEnvClient

NENYAX = str(Path(sys.executable).with_name("nenyax"))


def _start(uri):
    process = subprocess.Popen(
        [NENYAX, "serve", uri, "--port", "0", "--max-sessions", "8"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = process.stdout.readline()
    match = re.search(r"(http://127\.0\.0\.1:\d+)", line)
    if match is None:
        process.kill()
        pytest.fail(f"nenyax serve did not start: {line}{process.stderr.read()}")
    return process, match.group(1)


async def _held_session(url, opened):
    """Open a session, set `opened`, then wait for the server to close it; return how it closed."""
    async with aiohttp.ClientSession() as session, session.ws_connect(url.replace("http", "ws", 1) + "/ws") as ws:
        await ws.send_str('{"type": "reset", "data": {}}')
        await ws.receive(timeout=10)
        opened.set()
        msg = await ws.receive(timeout=30)
        return msg.type, ws.close_code


@pytest.mark.parametrize(("signum", "exit_code"), [(signal.SIGTERM, 0), (signal.SIGINT, 130)])
def test_serve_command_plays_and_shuts_down_gracefully(signum, exit_code):
    process, url = _start("reasoning_gym:basic_arithmetic?size=5")
    try:
        with GenericEnvClient(base_url=url).sync() as client:
            client.reset(seed=2)
            final = client.step({"message": "<answer>1</answer>"})
        assert final.done is True
        assert final.reward == final.metadata["judgment"]["score"]

        async def scenario():
            opened = asyncio.Event()
            held = asyncio.ensure_future(_held_session(url, opened))
            await asyncio.wait_for(opened.wait(), 10)
            process.send_signal(signum)
            return await held

        kind, code = asyncio.run(scenario())
        assert kind == aiohttp.WSMsgType.CLOSE
        assert code == 1001
        assert process.wait(timeout=30) == exit_code
        assert "Shutting down" in process.stdout.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_serve_share_reference_lets_check_audit_the_server_back():
    process = subprocess.Popen(
        [NENYAX, "serve", "reasoning_gym:basic_arithmetic?size=20&seed=7", "--port", "0", "--share-reference"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        first = process.stdout.readline()
        url = re.search(r"(http://127\.0\.0\.1:\d+)", first).group(1)
        assert "every client can read the answers" in process.stdout.readline()
        checked = subprocess.run(
            [NENYAX, "check", f"openenv:{url}?reference=reference", "--json"], capture_output=True, text=True
        )
        assert checked.returncode == 0, checked.stderr
        assert json.loads(checked.stdout)["tier"] == "audited"
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
