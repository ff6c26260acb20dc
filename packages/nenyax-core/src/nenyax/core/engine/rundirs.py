"""Run directories: one folder per run, holding its settings and its trajectories."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import orjson

from nenyax.core.contract import serde
from nenyax.core.contract.manifest import Manifest


def new_run_dir(root: str | Path, manifest: Manifest, extra: dict[str, Any] | None = None) -> Path:
    """Create ``root/<time>-<env>/`` holding ``run.json`` (manifest and settings)."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", manifest.uri)[:60].strip("-")
    path = Path(root) / f"{time.strftime('%Y%m%d-%H%M%S')}-{slug}"
    suffix = 1
    while path.exists():
        suffix += 1
        path = path.with_name(f"{path.name.rsplit('~', 1)[0]}~{suffix}")
    path.mkdir(parents=True)
    record = {"manifest": serde.to_data(manifest), "digest": serde.digest(manifest), **(extra or {})}
    (path / "run.json").write_bytes(orjson.dumps(record, option=orjson.OPT_INDENT_2))
    return path
