"""Harbor tasks (task.toml, instruction.md, environment/, tests/test.sh, solution/) as Nenyax task environments."""

from nenyax.adapters.harbor._version import __version__

__all__ = ["__version__"]
