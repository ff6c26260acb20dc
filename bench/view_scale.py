"""`nenyax view` at scale: the page's size and its load time in headless Chromium, at N episodes.

Plays N reasoning-gym episodes (reference policy), writes the viewer page with `render_run`, then
opens it in headless Chromium over the DevTools protocol (the client in tests/test_run_view_browser.py)
and measures: render time in Python, file size, navigation to the load event, a filter applied
to every row, and opening the last episode's replay. The anchor, side by side: the same page with
no replays embedded (the table alone), so the ratio says what carrying every replay costs.

    python bench/view_scale.py [--episodes 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from test_run_view_browser import Chromium

from nenyax.cli import run_view
from nenyax.core import load


async def measure(page: Path, tmp: Path, n: int, open_one: bool = True) -> dict[str, float]:
    async with Chromium(tmp) as chrome:
        loaded = await chrome.open(page.as_uri())
        started = time.perf_counter()
        await chrome.type_into("q", "basic_arithmetic")
        await chrome.js("document.getElementById('count').textContent")
        filtered = time.perf_counter() - started
        if not open_one:
            assert chrome.errors == [], chrome.errors
            return {"load": loaded, "filter": filtered, "open": float("nan")}
        started = time.perf_counter()
        opened = await chrome.js(
            f"(() => {{ const e = document.getElementById('e{n - 1}'); if (!e) return 'none';"
            f" openEpisode('{n - 1}'); return 'ok'; }})()"
        )
        title = ""
        deadline = time.perf_counter() + 60
        while opened == "ok" and not title and time.perf_counter() < deadline:
            title = await chrome.js("document.getElementById('replay').contentDocument.title")
        assert title.startswith("nenyax replay"), title
        open_s = time.perf_counter() - started
        assert chrome.errors == [], chrome.errors
        return {"load": loaded, "filter": filtered, "open": open_s if opened == "ok" else float("nan")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=10000)
    args = parser.parse_args()
    n = args.episodes
    env = load(f"reasoning_gym:basic_arithmetic?size={n}&seed=42")
    trajectories = env.rollouts("reference", n)
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        full = run_view.render_run(trajectories, title="bench")
        render_s = time.perf_counter() - started
        page = Path(tmp) / "view.html"
        page.write_text(full, encoding="utf-8")
        original = run_view.render_html
        run_view.render_html = lambda traj: ""  # the anchor: the same table, no replay carried
        table_only = Path(tmp) / "table.html"
        table_only.write_text(run_view.render_run(trajectories, title="bench"), encoding="utf-8")
        run_view.render_html = original
        full_m = asyncio.run(measure(page, Path(tmp) / "a", n))
        table_m = asyncio.run(measure(table_only, Path(tmp) / "b", n, open_one=False))
        size, table_size = page.stat().st_size, table_only.stat().st_size
    print(f"{n} episodes")
    print(f"render in Python      : {render_s:.2f} s")
    per = size / n
    print(
        f"file size             : {size / 1e6:.1f} MB ({per:,.0f} bytes/episode); table alone {table_size / 1e6:.1f} MB"
    )
    ratio = full_m["load"] / table_m["load"]
    print(f"Chromium load event   : {full_m['load']:.2f} s; table alone {table_m['load']:.2f} s (ratio {ratio:.2f})")
    print(f"filter every row      : {full_m['filter'] * 1000:.0f} ms")
    print(f"open the last episode : {full_m['open'] * 1000:.0f} ms")


if __name__ == "__main__":
    main()
