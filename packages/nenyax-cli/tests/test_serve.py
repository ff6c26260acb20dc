"""`nenyax serve` without its server distribution: one sentence saying what to install, exit 2."""

import subprocess
import sys

# A None entry in sys.modules makes the import fail exactly as it does when the package is absent.
PROBE = """
import sys
sys.modules["nenyax.server.openenv"] = None
from nenyax.cli.main import cli
cli(["serve", "reasoning_gym:basic_arithmetic"])
"""


def test_serve_without_the_server_package_says_what_to_install():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().startswith("Error: nenyax serve needs the OpenEnv server: install it with `pip install")
    assert "packages/nenyax-server-openenv`" in done.stderr  # its folder: what resolves from a checkout
    assert "`pip install nenyax-server-openenv`" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr


def test_serve_is_listed_without_importing_it():
    done = subprocess.run([sys.executable, "-m", "nenyax.cli", "--help"], capture_output=True, text=True, timeout=60)
    assert "serve" in done.stdout
    assert "OpenEnv server" in done.stdout
