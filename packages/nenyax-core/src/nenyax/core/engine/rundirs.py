"""Run directories: one folder per run, in one layout every command that records episodes uses.

    <run>/run.toml            the resolved config: what to run (reproducible with `--config`) and
                              what it ran with (manifest digest, versions of every nenyax distribution)
    <run>/trajectories.jsonl  one trajectory per line, appended as each episode finishes
    <run>/summary.json        the run's figures (`Summary`), written when the run ends
    <run>/check.json          (``nenyax check --save`` only) the tier report, in place of a summary

Nothing else is required. Secrets are never written: a provider's key is named by its environment
variable (``api_key_env``). `load_run` reads a directory back as typed objects.
"""

from __future__ import annotations

import re
import sys
import time
import tomllib
from importlib import metadata
from pathlib import Path
from typing import Any

import attrs
import orjson

from nenyax.core.contract import serde
from nenyax.core.contract.manifest import Manifest
from nenyax.core.contract.trajectory import Trajectory
from nenyax.core.engine.sinks import read_trajectories
from nenyax.core.engine.summary import Summary
from nenyax.core.errors import UsageError

RUN_TOML = "run.toml"
TRAJECTORIES = "trajectories.jsonl"
SUMMARY = "summary.json"
CHECK_REPORT = "check.json"


@attrs.frozen(kw_only=True)
class RunConfig:
    """What `run.toml` holds.

    `settings` is what the command was given (a table per section, e.g. ``{"uri": ..., "samples": 4,
    "provider": {"use": "local", "model": "smollm2-135m"}}``): a command's ``--config`` reads it back.
    `recorded` is what the run found: the manifest digest, the versions installed, when it started.
    """

    settings: dict[str, Any]
    recorded: dict[str, Any] = attrs.field(factory=dict)

    @property
    def uri(self) -> str:
        """The environment's URI."""
        return str(self.settings.get("uri", ""))

    @property
    def manifest_digest(self) -> str | None:
        """Digest of the manifest the run started with."""
        value = self.recorded.get("manifest_digest")
        return None if value is None else str(value)

    @property
    def versions(self) -> dict[str, str]:
        """Version of every installed nenyax distribution when the run started."""
        return dict(self.recorded.get("versions", {}))


@attrs.frozen(kw_only=True)
class Run:
    """A run directory read back: its config, its trajectories (file order) and its summary (None if unfinished)."""

    path: Path
    config: RunConfig
    trajectories: tuple[Trajectory, ...]
    summary: Summary | None


def nenyax_versions() -> dict[str, str]:
    """``{distribution: version}`` for every installed distribution whose name starts with ``nenyax``."""
    found = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"] or ""
        if name.lower().startswith("nenyax"):
            found[name] = dist.version
    return dict(sorted(found.items()))


def _check_no_secret(settings: dict[str, Any], where: str = "") -> None:
    # A config names a key's environment variable; a key itself must never land on disk.
    for key, value in settings.items():
        if isinstance(value, dict):
            _check_no_secret(value, f"{where}{key}.")
        elif key in {"api_key", "token", "password", "secret"}:
            msg = f"A run config never holds a secret ({where}{key}); name its environment variable with api_key_env."
            raise UsageError(msg)


def _toml_dumps(data: dict[str, Any]) -> str:
    import tomli_w  # only a run that writes a directory needs it

    def clean(value: Any) -> Any:
        # TOML has no null: a setting left unset is simply absent.
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items() if v is not None}
        if isinstance(value, list | tuple):
            return [clean(v) for v in value if v is not None]
        return value

    text: str = tomli_w.dumps(clean(data))  # tomli_w is not installed in the lint session, so untyped there
    return text


def create_run(
    path: str | Path,
    settings: dict[str, Any],
    manifest: Manifest | None,
    *,
    extra: dict[str, Any] | None = None,
    if_taken: str = "name a new directory",
) -> RunConfig:
    """Make the run directory `path` (it must not exist or be empty) and write its `run.toml`.

    `manifest` may be None when the run starts before the environment loads (``check`` measures the
    load itself); `record_manifest` adds its digest once known. `if_taken` ends the sentence a
    directory that already holds files gets (what the command offers instead).
    """
    path = Path(path)
    if path.exists() and any(path.iterdir()):
        msg = f"{path} already holds files; {if_taken}."
        raise UsageError(msg)
    _check_no_secret(settings)
    recorded = {
        **(_manifest_facts(manifest) if manifest is not None else {}),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "python": sys.version.split()[0],
        "versions": nenyax_versions(),
        **(extra or {}),
    }
    config = RunConfig(settings=dict(settings), recorded=recorded)
    path.mkdir(parents=True, exist_ok=True)
    _write_config(path, config)
    return config


def _manifest_facts(manifest: Manifest) -> dict[str, Any]:
    return {"manifest_digest": serde.digest(manifest), "format": manifest.format}


def _write_config(path: Path, config: RunConfig) -> None:
    # Replaced atomically: a killed write never leaves a run without its config.
    partial = path / f"{RUN_TOML}.partial"
    partial.write_text(_toml_dumps({**config.settings, "recorded": config.recorded}), encoding="utf-8")
    partial.replace(path / RUN_TOML)


def record_manifest(path: str | Path, manifest: Manifest) -> RunConfig:
    """Add the manifest's digest and format to the `run.toml` of a run that started without them."""
    config = read_config(path)
    config = RunConfig(settings=config.settings, recorded={**config.recorded, **_manifest_facts(manifest)})
    _write_config(Path(path), config)
    return config


def read_config(path: str | Path) -> RunConfig:
    """Read a `run.toml` (or a run directory's): settings and, when present, the ``[recorded]`` table."""
    path = Path(path)
    if path.is_dir():
        path = path / RUN_TOML
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        msg = f"{path} does not exist; name a run directory or a run.toml."
        raise UsageError(msg) from exc
    except tomllib.TOMLDecodeError as exc:
        msg = f"{path} is not valid TOML ({exc}); fix the file or write a new one."
        raise UsageError(msg) from exc
    recorded = data.pop("recorded", {})
    return RunConfig(settings=data, recorded=recorded if isinstance(recorded, dict) else {})


def write_summary(path: str | Path, summary: Summary) -> None:
    """Write `summary.json` (replacing it atomically, so a killed write never leaves half a file)."""
    target = Path(path) / SUMMARY
    partial = target.with_suffix(".json.partial")
    partial.write_bytes(orjson.dumps(serde.to_data(summary), option=orjson.OPT_INDENT_2) + b"\n")
    partial.replace(target)


def read_summary(path: str | Path) -> Summary | None:
    """The summary of a run directory, or None when it has none (an unfinished run; a check's, see `load_run`)."""
    target = Path(path) / SUMMARY
    if not target.exists():
        return None
    return serde.loads(target.read_bytes(), Summary)


def load_run(path: str | Path) -> Run:
    """Read a run directory: ``load_run("runs/x").summary.mean``, ``.trajectories``, ``.config.uri``.

    A ``nenyax check --save`` directory has no summary: its episodes are played by several policies
    (null, random, constants, the reference), whose mean score together measures nothing; its
    ``check.json`` holds the report instead.
    """
    path = Path(path)
    if not (path / RUN_TOML).exists():
        msg = f"{path} is not a run directory (it has no {RUN_TOML}); name the folder `nenyax eval --out` wrote."
        raise UsageError(msg)
    jsonl = path / TRAJECTORIES
    trajectories = tuple(read_trajectories(jsonl)) if jsonl.exists() else ()
    return Run(path=path, config=read_config(path), trajectories=trajectories, summary=read_summary(path))


def default_run_path(root: str | Path, uri: str) -> Path:
    """``root/<time>-<env>/``, a name no other run has."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", uri)[:60].strip("-")
    path = Path(root) / f"{time.strftime('%Y%m%d-%H%M%S')}-{slug}"
    suffix = 1
    while path.exists():
        suffix += 1
        path = path.with_name(f"{path.name.rsplit('~', 1)[0]}~{suffix}")
    return path


def new_run_dir(root: str | Path, manifest: Manifest, extra: dict[str, Any] | None = None) -> Path:
    """Create ``root/<time>-<env>/`` holding a `run.toml` with the manifest's URI and `extra` as settings."""
    path = default_run_path(root, manifest.uri)
    create_run(path, {"uri": manifest.uri, **(extra or {})}, manifest)
    return path
