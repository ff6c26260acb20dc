"""`nenyax view` in a real headless Chromium, driven over the DevTools protocol.

`--dump-dom` (as the replay's browser test uses) cannot type into a filter or click a row, so this
test talks to Chromium's DevTools WebSocket with aiohttp: it records every console error, uncaught
exception and CSP violation, types into the filters and clicks an episode.
"""

import asyncio
import json
import re
import shutil
import subprocess
import sys
import time

import aiohttp
import pytest

from nenyax.cli.run_view import render_run
from nenyax.core import load

URI = "reasoning_gym:basic_arithmetic?size=6"


class Chromium:
    """A headless Chromium and one page, over the DevTools protocol."""

    def __init__(self, tmp_path):
        binary = shutil.which("chromium") or shutil.which("chromium-browser")
        assert binary, "Chromium is required: apt-get install chromium (the nox integration session installs it)."
        flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
        flags += ["--disable-component-update", "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}"]
        self.proc = subprocess.Popen(
            [binary, *flags, "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", "about:blank"],
            stderr=subprocess.PIPE,
            text=True,
        )
        for line in self.proc.stderr:  # Chromium names its port on stderr
            found = re.search(r"DevTools listening on (ws://\S+)", line)
            if found:
                self.browser_ws = found.group(1)
                break
        else:
            raise AssertionError("Chromium did not start its DevTools server")
        self.errors, self.events, self._id = [], [], 0

    async def __aenter__(self):
        port = re.search(r":(\d+)/", self.browser_ws).group(1)
        self.http = aiohttp.ClientSession()
        async with self.http.get(f"http://127.0.0.1:{port}/json/list") as reply:
            page = next(t for t in await reply.json() if t["type"] == "page")
        self.ws = await self.http.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0)
        self._pending = {}
        self._reader = asyncio.create_task(self._read())
        for domain in ("Page", "Runtime", "Log"):
            await self.send(f"{domain}.enable")
        return self

    async def __aexit__(self, *exc):
        self._reader.cancel()
        await self.ws.close()
        await self.http.close()
        self.proc.kill()
        self.proc.wait()

    async def _read(self):
        async for message in self.ws:
            data = json.loads(message.data)
            if "id" in data:
                self._pending.pop(data["id"]).set_result(data)
                continue
            self.events.append(data["method"])
            params = data.get("params", {})
            if data["method"] == "Runtime.exceptionThrown":
                self.errors.append(params["exceptionDetails"].get("text"))
            elif data["method"] == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
                self.errors.append(str(params["args"]))
            elif data["method"] == "Log.entryAdded" and params["entry"]["level"] == "error":
                self.errors.append(params["entry"]["text"])

    async def send(self, method, **params):
        self._id += 1
        future = asyncio.get_running_loop().create_future()
        self._pending[self._id] = future
        await self.ws.send_str(json.dumps({"id": self._id, "method": method, "params": params}))
        reply = await asyncio.wait_for(future, 120)
        assert "error" not in reply, reply
        return reply["result"]

    async def open(self, url):
        """Navigate and wait for the load event; returns the seconds it took."""
        started = time.perf_counter()
        self.events.clear()
        await self.send("Page.navigate", url=url)
        while "Page.loadEventFired" not in self.events:
            await asyncio.sleep(0.01)
        return time.perf_counter() - started

    async def type_into(self, element_id, value):
        """Set a form field's value and fire its input event, as typing would."""
        await self.js(
            f"(() => {{ const e = document.getElementById({json.dumps(element_id)}); e.value = {json.dumps(value)};"
            " e.dispatchEvent(new Event('input')); })()"
        )

    async def js(self, expression):
        result = await self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        assert "exceptionDetails" not in result, result
        return result["result"].get("value")


def _trajectories():
    env = load(URI)
    good = env.rollouts("reference", 6)
    bad = env.rollouts(lambda q: "</script><b>no idea</b>", 3)  # scored 0, with markup to keep as text
    return [*good, *bad]


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    path = tmp_path_factory.mktemp("view") / "view.html"
    path.write_text(render_run(_trajectories(), title="test run"), encoding="utf-8")
    return path


VISIBLE = "document.querySelectorAll('#rows tr').length"


def test_the_viewer_filters_sorts_and_opens_an_episode_with_no_console_error(page, tmp_path):
    async def main():
        async with Chromium(tmp_path) as chrome:
            await chrome.open(page.as_uri())
            assert await chrome.js(VISIBLE) == 9
            assert await chrome.js("document.getElementById('count').textContent") == "9 of 9 episodes"
            # the score range: only the 0s
            await chrome.type_into("max", "0.5")
            assert await chrome.js(VISIBLE) == 3
            await chrome.type_into("max", "")
            # the text search reaches the model's replies
            await chrome.type_into("q", "NO IDEA")
            assert await chrome.js(VISIBLE) == 3
            await chrome.type_into("q", "")
            # the status filter: every episode here is ok
            await chrome.type_into("status", "policy_error")
            assert await chrome.js(VISIBLE) == 0
            await chrome.type_into("status", "")
            # sorting by score, twice: ascending then descending
            await chrome.js("document.querySelector('th[data-key=score]').click()")
            first = await chrome.js("document.querySelector('#rows tr td:nth-child(5)').textContent")
            await chrome.js("document.querySelector('th[data-key=score]').click()")
            again = await chrome.js("document.querySelector('#rows tr td:nth-child(5)').textContent")
            assert (first, again) == ("0", "1")
            # an episode opens: its replay, the very document `try --html` writes, in a sandboxed frame
            await chrome.js("document.querySelector('#rows tr[data-i=\"7\"]').click()")
            await asyncio.sleep(0.5)
            title = await chrome.js("document.getElementById('replay').contentDocument.title")
            text = await chrome.js("document.getElementById('replay').contentDocument.body.innerText")
            frame_scripts = await chrome.js(
                "[...document.getElementById('replay').contentDocument.querySelectorAll('script')].map(s => s.type)"
            )
            assert title == "nenyax replay: reasoning_gym:basic_arithmetic?size=6"
            assert "</script><b>no idea</b>" in text
            assert "score 0" in text
            assert frame_scripts == ["application/json"]  # the reply made no element
            assert await chrome.js("location.hash") == "#7"
            assert chrome.errors == []

    asyncio.run(main())


def test_the_view_command_writes_the_page_of_a_run_directory(tmp_path):
    run = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "nenyax.cli", "eval", URI, "--policy", "reference", "--out", str(run)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    done = subprocess.run(
        [sys.executable, "-m", "nenyax.cli", "view", str(run)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    html = (run / "view.html").read_text()
    assert html.count('type="application/json" id="e') == 6
    assert "mean score 1.000" in html
    done = subprocess.run(
        [sys.executable, "-m", "nenyax.cli", "view", str(tmp_path / "nothing")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "does not exist" in done.stderr
    assert "Traceback" not in done.stderr


def test_serve_publishes_the_page_and_nothing_else_on_loopback(tmp_path):
    import urllib.error
    import urllib.request

    run = tmp_path / "run"
    subprocess.run(
        [sys.executable, "-m", "nenyax.cli", "eval", URI, "--policy", "null", "--out", str(run)],
        check=True,
        capture_output=True,
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "nenyax.cli", "view", str(run), "--serve"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        url = next(m.group(0) for line in proc.stderr if (m := re.search(r"http://127\.0\.0\.1:\d+/view\.html", line)))
        with urllib.request.urlopen(url, timeout=30) as reply:
            assert reply.read().decode() == (run / "view.html").read_text()
        with pytest.raises(urllib.error.HTTPError, match="404"):
            urllib.request.urlopen(url.replace("view.html", "run.toml"), timeout=30)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


# Every header cell, and every cell of the last column, must be on screen and be what is drawn at its own
# centre: not under the replay frame, not clipped by a scrolling pane, not past the window's edge.
HIDDEN = """(() => {
  const hidden = [];
  const cells = [...document.querySelectorAll('thead th'), ...document.querySelectorAll('#rows tr td:last-child')];
  for (const c of cells) {
    const r = c.getBoundingClientRect();
    const x = r.left + r.width / 2, y = r.top + r.height / 2;
    const top = document.elementFromPoint(x, y);
    if (r.width === 0 || r.right > innerWidth || r.bottom > innerHeight || !(top && c.contains(top)))
      hidden.push(c.textContent + " at " + Math.round(r.left) + ".." + Math.round(r.right));
  }
  return {hidden: hidden, frameLeft: document.getElementById('replay').getBoundingClientRect().left,
          lastRight: Math.max(...cells.map((c) => c.getBoundingClientRect().right))};
})()"""


@pytest.fixture(scope="module")
def wide_page(tmp_path_factory):
    """The widest cells a run has: the longest status, a long question, a long reply, big numbers."""
    env = load("reasoning_gym:basic_arithmetic?size=4&min_terms=6&max_terms=6&min_digits=4&max_digits=4")
    crashed = env.rollouts(lambda q: 1 / 0, 1)  # policy_error
    rambling = env.rollouts(lambda q: "Let me think about this for a while. " * 20, 2)
    path = tmp_path_factory.mktemp("wide") / "view.html"
    path.write_text(render_run([*_trajectories(), *crashed, *rambling], title="a wide run"), encoding="utf-8")
    return path


@pytest.mark.parametrize("width", [1280, 1400])
def test_at_1280_px_and_up_every_column_shows_beside_the_replay(wide_page, tmp_path, width):
    async def main():
        async with Chromium(tmp_path) as chrome:
            await chrome.send(
                "Emulation.setDeviceMetricsOverride", width=width, height=800, deviceScaleFactor=1, mobile=False
            )
            await chrome.open(wide_page.as_uri())
            statuses = await chrome.js(
                "[...document.querySelectorAll('#rows tr td:nth-child(4)')].map(t => t.textContent)"
            )
            assert "policy_error" in statuses
            await chrome.js("document.querySelector('#rows tr[data-i=\"0\"]').click()")
            seen = await chrome.js(HIDDEN)
            headers = await chrome.js("[...document.querySelectorAll('thead th')].map((th) => th.textContent)")
            assert headers[-1] == "own s"
            assert seen["hidden"] == []
            assert seen["lastRight"] <= seen["frameLeft"]
            pane = "document.querySelector('.rows')"
            assert await chrome.js(f"{pane}.scrollWidth <= {pane}.clientWidth")  # no column behind a scrollbar
            assert chrome.errors == []

    asyncio.run(main())


def test_the_replay_pane_asks_for_an_episode_until_one_is_chosen(page, tmp_path):
    async def main():
        async with Chromium(tmp_path) as chrome:
            await chrome.open(page.as_uri())
            await asyncio.sleep(0.3)
            before = await chrome.js("document.getElementById('replay').contentDocument.body.innerText")
            assert "Choose an episode" in before
            await chrome.js("document.querySelector('#rows tr[data-i=\"2\"]').click()")
            await asyncio.sleep(0.5)
            after = await chrome.js("document.getElementById('replay').contentDocument.body.innerText")
            assert "Choose an episode" not in after
            assert "score 1" in after
            assert chrome.errors == []

    asyncio.run(main())
