"""The base image the shipped example environments build on, made on this machine: nothing is pulled.

Karotte's templates build ``FROM amazonlinux`` and install uv and Python from the network at build time; on a
machine that reaches no container registry that cannot work. ``localhost/nenyax-karotte-base`` is made
instead from what the package registries serve:

- a Debian trixie root filesystem (Python 3.13, iptables, the tools karotte's harness calls) made by
  ``mmdebstrap`` from the host's apt mirror, cached as a tar under ``~/.cache/nenyax/images`` by its recipe;
- the karotte release installed beside Nenyax, with its dependencies, from wheels that pip downloads on the
  host (through the host's own index and certificates) and the build installs offline into ``/root/.venv``,
  where karotte's launcher runs it (``/root/.venv/bin/karotte``).

The image carries the karotte version and the recipe in a label, and is made again when either changes; a
copy is saved under the same cache and loaded into an engine that lacks it.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

from nenyax.core.errors import InfraFailure

BASE_IMAGE = "localhost/nenyax-karotte-base:latest"
"""What the shipped examples' Containerfiles name in their FROM."""

VERSION_LABEL = "nenyax.karotte.version"

PACKAGES = ("python3", "python3-venv", "iptables", "procps", "passwd", "util-linux", "findutils", "e2fsprogs")
"""Debian packages of the root filesystem: Python for karotte, and the tools its harness runs (iptables for
the student's firewall, pkill, useradd, mkfs.ext4 for disk quotas)."""

CACHE = Path.home() / ".cache" / "nenyax" / "images"
"""Where the root filesystem's tar and a saved copy of the made image are kept (the podman session's cache)."""

PYTHON = "3.13"
"""trixie's Python: the wheels are chosen for it."""

_TAIL = 600


def _run(command: list[str], what: str, **kwargs: object) -> None:
    done = subprocess.run(command, capture_output=True, text=True, check=False, **kwargs)  # type: ignore[call-overload]
    if done.returncode != 0:
        tail = " ".join((done.stderr or done.stdout or "").split())[-_TAIL:]
        raise InfraFailure(f"Making {BASE_IMAGE} failed while {what}: {tail or f'exit {done.returncode}'}")


def _engine(engine: str) -> list[str]:
    if shutil.which(engine) is None:
        raise InfraFailure(f"{engine} is not installed, and karotte's {engine} runtime drives it.")
    return [engine]


def installed_label(engine: str = "podman") -> str | None:
    """The base image's label (the karotte version it holds and the recipe's digest), or None when there is none."""
    done = subprocess.run(
        [*_engine(engine), "image", "inspect", "--format", f'{{{{ index .Labels "{VERSION_LABEL}" }}}}', BASE_IMAGE],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() or None if done.returncode == 0 else None


def _mirror() -> str:
    sources = Path("/etc/apt/sources.list.d/debian.sources")
    listed = sources.read_text().splitlines() if sources.exists() else []
    uris = [line.split()[1] for line in listed if line.startswith("URIs:") and "security" not in line]
    return uris[0] if uris else "http://deb.debian.org/debian"


def root_filesystem() -> Path:
    """The trixie root filesystem tar, made once per recipe."""
    if shutil.which("mmdebstrap") is None:
        raise InfraFailure(
            f"mmdebstrap is not installed, and {BASE_IMAGE} is made with it (apt-get install mmdebstrap)."
        )
    recipe = ["mmdebstrap", "--quiet", "--variant=minbase", f"--include={','.join(PACKAGES)}", "--mode=root"]
    recipe += ["--format=tar", "trixie"]
    mirror = _mirror()
    key = hashlib.sha256(json.dumps([*recipe, mirror]).encode()).hexdigest()[:12]
    tar = CACHE / f"debian-trixie-karotte-{key}.tar"
    if not tar.exists():
        tar.parent.mkdir(parents=True, exist_ok=True)
        partial = tar.with_suffix(".partial")  # a killed run leaves no tar that looks whole
        _run([*recipe, str(partial), mirror], "making the Debian root filesystem (mmdebstrap)")
        partial.rename(tar)
    return tar


def _pip() -> list[str]:
    """A pip to download with: this interpreter's, else the first on PATH (a uv venv has none of its own)."""
    if subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True, check=False).returncode == 0:
        return [sys.executable, "-m", "pip"]
    for name in ("pip3", "pip"):
        if found := shutil.which(name):
            return [found]
    raise InfraFailure(f"No pip is installed here, and {BASE_IMAGE} is made from wheels pip downloads.")


def download_wheels(version: str, into: Path) -> None:
    """karotte `version` and its dependencies as wheels for trixie's CPython on this machine's architecture."""
    arch = platform.machine()
    platforms = [f"--platform={tag}_{arch}" for tag in ("manylinux_2_28", "manylinux_2_17", "manylinux2014")]
    command = [*_pip(), "download", "--quiet", "--only-binary=:all:", f"--python-version={PYTHON}"]
    command += ["--implementation=cp", *platforms, "--platform=any", "--dest", str(into), f"karotte=={version}"]
    _run(command, f"downloading karotte {version}'s wheels", env={**os.environ, "PIP_CONSTRAINT": ""})


CONTAINERFILE = f"""\
FROM {{rootfs}}
# litellm fetches its model price list from GitHub when imported otherwise: three tries, some 7 s, per run.
ENV LITELLM_LOCAL_MODEL_COST_MAP=True
COPY wheels/ /tmp/wheels/
RUN python3 -m venv /root/.venv \\
  && /root/.venv/bin/pip install --quiet --no-index --find-links /tmp/wheels karotte=={{version}} \\
  && rm -rf /tmp/wheels /root/.cache
LABEL {VERSION_LABEL}={{label}}
"""

RECIPE = hashlib.sha256(CONTAINERFILE.encode()).hexdigest()[:8]
"""Changes with the recipe above: an image made by an older recipe is made again."""


def ensure(engine: str = "podman") -> str:
    """Make the base image unless it holds the installed karotte already; returns that version.

    One process at a time (a lock file beside the cache): two test workers, or two `nenyax` commands, would
    otherwise both make it. A made image is saved beside the root filesystem's tar and loaded from there
    by an engine that lacks it (a fresh podman's storage: seconds instead of a minute and a half).
    """
    version = metadata.version("karotte")
    label = f"{version}-{RECIPE}"
    if installed_label(engine) == label:
        return version
    CACHE.mkdir(parents=True, exist_ok=True)
    with (CACHE / "karotte-base.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if installed_label(engine) == label:  # another process made it while this one waited
            return version
        saved = CACHE / f"karotte-base-{label}.tar"
        if saved.exists():
            _run([*_engine(engine), "load", "--quiet", "--input", str(saved)], "loading its saved copy")
            if installed_label(engine) == label:
                return version
        _make(engine, version, label)
        partial = saved.with_suffix(".partial")
        _run([*_engine(engine), "save", "--quiet", "--output", str(partial), BASE_IMAGE], "saving a copy")
        partial.rename(saved)
    return version


def _make(engine: str, version: str, label: str) -> None:
    rootfs = f"localhost/nenyax-karotte-rootfs:{root_filesystem().stem.rsplit('-', 1)[-1]}"
    path = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    _run(
        [*_engine(engine), "import", "--quiet", "--change", f"ENV={path}", str(root_filesystem()), rootfs],
        "importing the root filesystem",
    )
    with tempfile.TemporaryDirectory(prefix="nenyax-karotte-base-") as context:
        download_wheels(version, Path(context) / "wheels")
        (Path(context) / "Containerfile").write_text(CONTAINERFILE.format(rootfs=rootfs, version=version, label=label))
        _run([*_engine(engine), "build", "--quiet", "--tag", BASE_IMAGE, context], "building it")
