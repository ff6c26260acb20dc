"""What a session needs of this machine: Debian packages, other Pythons, uv's wheel folders, server venvs."""

from __future__ import annotations

import functools
import glob
import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import nox

from noxlib import workspace

# Pins applied to every install (e.g. torch==2.13.0: pip takes the local CPU wheel only when pinned).
CONSTRAINTS = ["-c", str(workspace.ROOT / "constraints.txt")]
# Where the venvs of upstream servers are kept between runs (`server_venvs`).
SERVER_VENVS = Path(os.environ.get("NENYAX_SERVER_VENVS", Path.home() / ".cache" / "nenyax" / "server-venvs"))
PYENV_ROOT = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))


def pyenv_python(version: str) -> str:
    """pyenv's newest `version` by path, else the bare version for nox to find on PATH.

    A pyenv shim may refuse `python3.12` (nox then finds none, and uv would try to download one).
    """
    found = sorted(glob.glob(f"{PYENV_ROOT}/versions/{version}.*/bin/python{version}"))
    return found[-1] if found else version


def find_python(session: nox.Session, version: str) -> str:
    """An interpreter of `version`: on PATH if it runs (a pyenv shim may refuse), else pyenv's newest."""
    candidates = [shutil.which(f"python{version}") or ""]
    candidates += sorted(glob.glob(f"{PYENV_ROOT}/versions/{version}.*/bin/python{version}"), reverse=True)
    for path in filter(None, candidates):
        if subprocess.run([path, "--version"], capture_output=True, check=False).returncode == 0:
            return path
    session.error(f"No Python {version} found (on PATH or under {PYENV_ROOT}/versions).")


def share_pip_find_links() -> None:
    """Give uv pip's configured local wheel folders (uv reads no pip configuration), before a session installs.

    This machine's CPU build of torch lies in pip's find-links folder; without it uv meets the pin
    (torch==2.13.0) with PyPI's CUDA build, some 3 GB more per virtualenv.
    """
    if not os.environ.get("UV_FIND_LINKS") and (links := _pip_find_links().split()):
        os.environ["UV_FIND_LINKS"] = ",".join(links)  # uv's list is comma-separated, pip's space-separated


def cache_bytecode() -> None:
    """Let the sessions' Pythons keep the bytecode they compile (a fresh virtualenv's first import writes it).

    This machine's (and CI's) environment sets PYTHONDONTWRITEBYTECODE, so every process the suites start
    compiled sympy, matplotlib, torch's Python and the rest from source again: `import reasoning_gym` took
    5.0 s each time instead of 1.4 s, one `nenyax check reasoning_gym:basic_arithmetic` 11.3 s instead of 3.5 s.
    """
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


@functools.cache
def _pip_find_links() -> str:
    """pip's configured local wheel folders (the env var, else pip.conf), space-separated."""
    if os.environ.get("PIP_FIND_LINKS"):
        return os.environ["PIP_FIND_LINKS"]
    asked = ["python3", "-m", "pip", "config", "get", "global.find-links"]
    done = subprocess.run(asked, capture_output=True, text=True, check=False)
    return done.stdout if done.returncode == 0 else ""


def ensure_debian(session: nox.Session, packages: Iterable[str]) -> None:
    """Debian packages a session's tests drive (chromium, bubblewrap...): installed when missing and we can
    (root with apt-get, as on CI); with `CI` set, one that cannot be installed fails the session."""
    wanted = sorted(set(packages))
    if not wanted:
        return
    if not shutil.which("dpkg"):
        session.warn(f"Not a Debian system: {', '.join(wanted)} must be installed by hand.")
        return
    missing = [p for p in wanted if subprocess.run(["dpkg", "-s", p], capture_output=True, check=False).returncode]
    if not missing:
        return
    if not (shutil.which("apt-get") and os.geteuid() == 0):
        if os.environ.get("CI"):
            session.error(f"Debian packages {', '.join(missing)} are needed and cannot be installed (no root apt-get).")
        session.warn(f"Debian packages {', '.join(missing)} are missing: their tests will say so.")
        return
    env = {"DEBIAN_FRONTEND": "noninteractive"}
    session.run("apt-get", "update", "-qq", external=True, env=env, silent=True)
    session.run("apt-get", "install", "-y", "-qq", *missing, external=True, env=env, silent=True)


def server_venvs(
    session: nox.Session, packages: Iterable[str], replaced: dict[str, dict[str, Any]] | None = None
) -> dict[str, str]:
    """[tool.nenyax.server-venv]: a venv of another Python holding an upstream server a package's tests
    run as a subprocess (nemo-gym needs Python >= 3.12); returns {the table's env var: that venv's python}.

    It holds upstream code only, so it is cached outside the checkout (`SERVER_VENVS`), one per table:
    a fresh clone on a machine that built it before reuses it (building it takes about 3 minutes), and a
    changed table builds another. `replaced` gives a package another table (a lane's other server version).
    """
    found = {}
    for package in sorted(packages):
        spec = (replaced or {}).get(package) or workspace.declared(package).get("server-venv")
        if not spec:
            continue
        wanted = json.dumps(spec, sort_keys=True)
        venv = SERVER_VENVS / f"{package}-{hashlib.sha256(wanted.encode()).hexdigest()[:12]}"
        python, stamp = venv / "bin" / "python", venv / "nenyax-server-venv.json"
        if not (python.exists() and stamp.exists() and stamp.read_text() == wanted):
            interpreter = find_python(session, spec["python"])
            session.run_install("uv", "venv", "-q", "--clear", "--python", interpreter, str(venv), external=True)
            install = ["uv", "pip", "install", "-q", "--python", str(python)]
            if "python-version" in spec:
                install += ["--python-version", spec["python-version"]]
            session.run_install(*install, *spec["requires"], *CONSTRAINTS, external=True)
            if spec.get("remove"):  # what the server pulls in but cannot import beside the CPU torch (vLLM's)
                uninstall = ["uv", "pip", "uninstall", "-q", "--python", str(python), *spec["remove"]]
                session.run_install(*uninstall, external=True)
            stamp.write_text(wanted)
        found[spec["env"]] = str(python)
    return found


def _session_env(session: nox.Session, env: dict[str, str]) -> dict[str, str]:
    """os.environ plus `env`, with the session's virtualenv first on PATH (what `session.run` gives a command)."""
    bin_dir = str(Path(session.virtualenv.location) / "bin")
    full = {**os.environ, **env, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    full["VIRTUAL_ENV"] = str(session.virtualenv.location)
    return full


def run_chains(
    session: nox.Session,
    chains: list[list[list[str]]],
    env: dict[str, str],
    workers: int = 2,
    folders: list[Path] | None = None,
) -> list[int]:
    """Run each chain (commands run in order, stopping at the first that fails) `workers` chains at a time, each
    from its folder in `folders` when given; print each chain's commands and output in order; the indexes of the
    chains that failed.

    For steps that are each one single-threaded process (imports, one pytest episode): two at a time keep
    both cores busy where `session.run`, one at a time, left one idle."""
    from concurrent.futures import ThreadPoolExecutor

    full = _session_env(session, env)
    where = folders or [None] * len(chains)

    def run(chain: list[list[str]], folder: Path | None) -> list[tuple[list[str], subprocess.CompletedProcess[str]]]:
        done = []
        for argv in chain:
            done.append((argv, subprocess.run(argv, cwd=folder, env=full, capture_output=True, text=True, check=False)))
            if done[-1][1].returncode != 0:
                break
        return done

    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(run, chains, where))
    failed = []
    for index, (done, folder) in enumerate(zip(results, where, strict=True)):
        for argv, result in done:
            session.log(f"cd {folder} && {' '.join(argv)}" if folder else " ".join(argv))
            print(result.stdout + result.stderr, end="", flush=True)
            if result.returncode != 0:
                failed.append(index)
    return failed


def run_pytests(
    session: nox.Session, runs: list[tuple[Path, list[str]]], env: dict[str, str], workers: int = 2
) -> list[int]:
    """Run each ``(folder, pytest argv)`` in the session's environment, `workers` at a time, each from its
    folder (its conftest and settings); print each one's output in order; the indexes of those that failed."""
    bin_dir = Path(session.virtualenv.location) / "bin"
    chains = [[[str(bin_dir / argv[0]), *argv[1:]]] for _, argv in runs]
    return run_chains(session, chains, env, workers, folders=[folder for folder, _ in runs])
