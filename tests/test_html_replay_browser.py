"""The HTML replay in a real headless Chromium: it opens, shows the judgment, runs no script."""

import shutil
import subprocess

from nenyax.cli.html_replay import render_html
from nenyax.core import load

EVIL = (
    "</pre></script><script>document.title='pwned';document.body.innerHTML='gone'</script><img src=x onerror=alert(1)>"
)


def _chromium(*args, tmp_path):
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    assert binary, "Chromium is required: apt-get install chromium (the nox integration session installs it)."
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
    flags += ["--disable-component-update", "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}"]
    return subprocess.run([binary, *flags, *args], capture_output=True, text=True, timeout=120, check=True)


def test_replay_renders_the_judgment_and_model_text_as_text(tmp_path):
    traj = load("reasoning_gym:basic_arithmetic").rollout(lambda q: EVIL + "\nAnswer: 30")
    page = tmp_path / "replay.html"
    page.write_text(render_html(traj), encoding="utf-8")
    dom = _chromium("--virtual-time-budget=2000", "--dump-dom", page.as_uri(), tmp_path=tmp_path).stdout
    assert "<title>nenyax replay: reasoning_gym:basic_arithmetic</title>" in dom  # the script did not retitle it
    assert 'id="score">score 1 · passed' in dom
    assert "&lt;script&gt;document.title='pwned'" in dom and "gone" not in dom.split("<body>")[0]
    assert "<img" not in dom
    shot = tmp_path / "replay.png"
    _chromium("--window-size=1000,800", f"--screenshot={shot}", page.as_uri(), tmp_path=tmp_path)
    assert shot.stat().st_size > 10_000
