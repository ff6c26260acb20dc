"""``python -m nenyax.cli``."""

from nenyax.cli.main import run

run()
