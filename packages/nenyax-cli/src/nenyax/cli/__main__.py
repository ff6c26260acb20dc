"""``python -m nenyax.cli``."""

import sys

from nenyax.cli.main import run

sys.exit(run())
