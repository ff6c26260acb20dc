"""Telling a package that is not installed from one that is installed but does not import.

A plugin that falls back when its library is absent must not fall back when the library is there and
broken (a dependency too old, a module its version lacks): that hides the real error behind "not
installed", and what runs instead fails later with a message that names neither. So fall back only when
`absent`, and otherwise raise `broken_import`'s sentence.
"""

from __future__ import annotations

from nenyax.core.errors import UsageError


def absent(exc: ImportError, *packages: str) -> bool:
    """True when `exc` says one of the top-level `packages` itself is not installed.

    A module missing inside the package (another version's layout) or in one of its dependencies means
    the package is installed but broken, which is not absence."""
    return isinstance(exc, ModuleNotFoundError) and exc.name in packages


def broken_import(module: str, exc: ImportError, hint: str = "") -> UsageError:
    """One sentence for `module` failing to import although its package is installed: which import, and why."""
    why = " ".join(str(exc).split()).rstrip(".") or type(exc).__name__
    tail = f"; {hint.rstrip('.')}" if hint else ""
    return UsageError(f"Importing {module} failed although it is installed ({type(exc).__name__}: {why}){tail}.")


def module_absent(exc: ImportError, module: str) -> bool:
    """True when `exc` (from importing or finding dotted `module`) says `module` or a package above it is not
    installed, rather than that one of them is installed and broken."""
    parts = module.split(".")
    return absent(exc, *(".".join(parts[: i + 1]) for i in range(len(parts))))
