"""``python -m nenyax.cli``."""

import sys

from nenyax.cli.main import cli

sys.exit(cli())
