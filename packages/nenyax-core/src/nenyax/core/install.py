"""How to install a distribution of this repository: its folder in a checkout, or its published name."""

from __future__ import annotations

from pathlib import Path


def checkout_packages() -> Path | None:
    """The ``packages/`` folder of the source checkout nenyax-core runs from (an editable install), if any."""
    # <root>/packages/nenyax-core/src/nenyax/core/install.py in a checkout; site-packages/nenyax/core/ otherwise.
    packages = Path(__file__).resolve().parents[4]
    if packages.name == "packages" and (packages / "nenyax-core" / "pyproject.toml").is_file():
        return packages
    return None


def pip_install(distribution: str, extra: str | None = None) -> str:
    """The `pip install` commands that install `distribution` (with its optional `extra`), as a sentence fragment.

    From a checkout the folder comes first (the distributions may not be published where pip looks);
    elsewhere both ways are named. A requirement with an extra is quoted, as shells glob its brackets.
    """

    def command(target: str) -> str:
        return f"`pip install '{target}[{extra}]'`" if extra else f"`pip install {target}`"

    packages = checkout_packages()
    folder = packages / distribution if packages is not None else None
    if folder is None or not (folder / "pyproject.toml").is_file():
        return (
            f"{command(distribution)}, or from a checkout of the Nenyax repository "
            f"{command('./packages/' + distribution)}"
        )
    try:
        shown = "./" + folder.relative_to(Path.cwd()).as_posix()
    except ValueError:
        shown = str(folder)
    return f"{command(shown)} (this checkout), or {command(distribution)} where it is published"
