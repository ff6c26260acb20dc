"""A private podman engine for the `podman` session: its Docker-compatible service on a socket of its own.

podman keeps all its state in a temporary folder (runc, since crun refuses hybrid cgroups; cgroupfs,
since there is no systemd; ulimits no higher than ours, since we lack CAP_SYS_RESOURCE). The default
image is a Debian bookworm minbase that mmdebstrap makes once, cached as a tar under ~/.cache/nenyax
by its recipe (no registry is reached): imported, and tagged as debian:bookworm-slim too, so a task's
FROM resolves offline.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import nox

TOOLS = ["podman", "runc", "catatonit", "mmdebstrap"]  # catatonit: the containers' init (--init)
IMAGE = "localhost/nenyax-debian:bookworm"


def unavailable() -> str | None:
    """Why this machine cannot run the engine (a tool missing, not root), or None when it can."""
    missing = [tool for tool in TOOLS if not shutil.which(tool)]
    if missing or os.geteuid() != 0:
        why = f"{', '.join(missing)} missing" if missing else "not root (rootful podman, cgroup limits)"
        return f"The podman session needs podman, runc, catatonit and mmdebstrap, as root: {why}."
    return None


def base_image(session: nox.Session) -> Path:
    """The Debian minbase tar, made by mmdebstrap from the host's apt mirror once per recipe."""
    sources = Path("/etc/apt/sources.list.d/debian.sources")
    listed = sources.read_text().splitlines() if sources.exists() else []
    uris = [line.split()[1] for line in listed if line.startswith("URIs:")]
    mirror = uris[0] if uris else "http://deb.debian.org/debian"
    # tmux: harbor's terminus-2 drives a tmux session inside, and installs it with apt otherwise (no network).
    recipe = ["mmdebstrap", "--quiet", "--variant=minbase", "--include=tmux", "--mode=root", "--format=tar", "bookworm"]
    key = hashlib.sha256(json.dumps([*recipe, mirror]).encode()).hexdigest()[:12]
    base = Path.home() / ".cache" / "nenyax" / "images" / f"debian-bookworm-minbase-{key}.tar"
    if not base.exists():
        base.parent.mkdir(parents=True, exist_ok=True)
        partial = base.with_suffix(".partial")  # a killed run leaves no tar that looks whole
        session.run(*recipe, str(partial), mirror, external=True)
        partial.rename(base)
    return base


def _configure(state: Path) -> dict[str, str]:
    """Write the engine's configuration under `state`; returns the variables that point podman at it."""
    (state / "tmp").mkdir()
    (state / "storage.conf").write_text(
        f'[storage]\ndriver = "overlay"\ngraphroot = "{state}/storage"\nrunroot = "{state}/run"\n'
    )
    # exit_command_delay: each exec's conmon stays that long after the command ends (podman's default is
    # 300 s, some 180 idle processes over this suite); the exit code is read the moment a command ends.
    (state / "containers.conf").write_text(
        f'[engine]\nruntime = "runc"\ncgroup_manager = "cgroupfs"\nevents_logger = "file"\nexit_command_delay = 10\n'
        f'events_logfile_path = "{state}/events.log"\ntmp_dir = "{state}/tmp"\n'
        f'volume_path = "{state}/storage/volumes"\nstatic_dir = "{state}/storage/libpod"\n'
        f'[network]\nnetwork_config_dir = "{state}/networks"\n'
        '[containers]\ndefault_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]\n'
    )
    return {"CONTAINERS_CONF": str(state / "containers.conf"), "CONTAINERS_STORAGE_CONF": str(state / "storage.conf")}


@contextlib.contextmanager
def engine(session: nox.Session) -> Iterator[dict[str, str]]:
    """A running podman service with the base image imported; yields the variables that lead to it (its
    `DOCKER_HOST`, and the configuration the podman command line reads), cleans all up after."""
    base = base_image(session)
    state = Path(tempfile.mkdtemp(prefix="nenyax-podman-"))  # short: a unix socket's path is at most 107 bytes
    conf = _configure(state)
    socket = state / "podman.sock"
    service = None
    try:
        path = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        session.run("podman", "import", "--quiet", "--change", f"ENV={path}", str(base), IMAGE, env=conf, external=True)
        session.run("podman", "tag", IMAGE, "docker.io/library/debian:bookworm-slim", env=conf, external=True)
        with (state / "service.log").open("wb") as log:
            service = subprocess.Popen(
                ["podman", "system", "service", "--time=0", f"unix://{socket}"],
                env={**os.environ, **conf},
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 30
        while not socket.exists() and service.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if not socket.exists():
            session.error(f"podman system service did not listen: {(state / 'service.log').read_text()[-2000:]}")
        yield {"DOCKER_HOST": f"unix://{socket}", **conf}
    finally:
        _tear_down(service, state, conf)


def _tear_down(service: subprocess.Popen[bytes] | None, state: Path, conf: dict[str, str]) -> None:
    """Stop the service, remove every container, exec process, storage and control group it left."""
    if service is not None:
        service.terminate()
        try:
            service.wait(15)
        except subprocess.TimeoutExpired:
            service.kill()
            service.wait()
    quiet = {"env": {**os.environ, **conf}, "capture_output": True, "check": False}
    subprocess.run(["podman", "rm", "--all", "--force", "--time", "0"], **quiet)
    # podman 4's exec sessions leave conmon processes waiting out an exit delay (300 s) after their
    # container is gone: ours are those naming our state folder.
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if str(state).encode() in cmdline.read_bytes():
                os.kill(int(cmdline.parent.name), 9)
        except (OSError, ValueError):
            continue
    subprocess.run(["podman", "system", "reset", "--force"], **quiet)  # unmounts its storage, then deletes it
    # The control groups the sandboxes had below ours: those still there held podman's exec conmons.
    lines = Path("/proc/self/cgroup").read_text().splitlines()
    own = next((line.split(":", 2)[2] for line in lines if line.split(":")[1] == "memory"), "/").strip("/")
    groups = Path("/sys/fs/cgroup").glob(f"*/{own}/nenyax-*/**" if own else "*/nenyax-*/**")
    for folder in sorted(groups, key=lambda folder: -len(folder.parts)):  # the deepest first
        try:
            folder.rmdir()
        except OSError:
            continue
    shutil.rmtree(state, ignore_errors=True)
