"""Make a real (unpacked) distribution on disk, so entry-point discovery can be tested end to end.

A folder holding ``<name>-<version>.dist-info`` is what pip leaves in site-packages; putting the
folder on ``sys.path`` (or ``PYTHONPATH``) makes `importlib.metadata` find it like any install.
"""

from __future__ import annotations

from pathlib import Path


def write_distribution(
    root: Path,
    name: str,
    version: str,
    entry_points: dict[str, str],
    modules: dict[str, str] | None = None,
    *,
    group: str = "nenyax",
) -> Path:
    """Write distribution `name` with entry points of `group` and module sources under `root`."""
    root.mkdir(parents=True, exist_ok=True)
    info = root / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    lines = [f"[{group}]", *(f"{ep} = {target}" for ep, target in entry_points.items())]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    for module, source in (modules or {}).items():
        path = root / (module.replace(".", "/") + ".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    return root
