"""The HTML replay in a real headless Chromium: it opens, shows the judgment, runs no script."""

import html.parser
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


class _Dom(html.parser.HTMLParser):
    """The elements of the DOM Chromium dumped, and the text of each ``<pre>`` block."""

    def __init__(self, dom):
        super().__init__()
        self.tags, self.scripts, self.blocks, self._in_pre = [], [], [], False
        self.feed(dom)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "script":
            self.scripts.append(dict(attrs))
        if tag == "pre":
            self._in_pre = True
            self.blocks.append("")

    def handle_endtag(self, tag):
        if tag == "pre":
            self._in_pre = False

    def handle_data(self, data):
        if self._in_pre:
            self.blocks[-1] += data


def test_replay_renders_the_judgment_and_model_text_as_text(tmp_path):
    reply = EVIL + "\nAnswer: 30"
    traj = load("reasoning_gym:basic_arithmetic").rollout(lambda q: reply)
    page = tmp_path / "replay.html"
    page.write_text(render_html(traj), encoding="utf-8")
    dom = _chromium("--virtual-time-budget=2000", "--dump-dom", page.as_uri(), tmp_path=tmp_path).stdout
    parsed = _Dom(dom)
    assert "<title>nenyax replay: reasoning_gym:basic_arithmetic</title>" in dom  # the script did not retitle it
    assert 'id="score">score 1 · passed' in dom  # nor replace the body
    # Anywhere in the document: the only script is the inert JSON one, the injected markup made no
    # element, and the reply is shown whole, as text (the action block, since the policy is a callable).
    assert parsed.scripts == [{"type": "application/json", "id": "nenyax-trajectory"}]
    assert "img" not in parsed.tags
    assert parsed.tags.count("script") == 1
    assert reply in parsed.blocks
    shot = tmp_path / "replay.png"
    _chromium("--window-size=1000,800", f"--screenshot={shot}", page.as_uri(), tmp_path=tmp_path)
    assert shot.stat().st_size > 10_000
