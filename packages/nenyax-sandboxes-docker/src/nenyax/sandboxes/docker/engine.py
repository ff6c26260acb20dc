"""Reaching the Docker Engine API: where it is, whether it runs on this machine, and its failures as
one `InfraFailure` sentence each.

Only API 1.41 is asked for (podman 4's compatible service speaks it; any Docker Engine since 20.10 does),
so no version is negotiated: making a client does no I/O, and the first real call says whether an
engine answers.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

import requests.exceptions

import docker
import docker.errors
from nenyax.core.errors import InfraFailure

API_VERSION = "1.41"
DEFAULT_HOST = "unix:///var/run/docker.sock"
T = TypeVar("T")


def engine_url(base_url: str | None) -> str:
    """The engine's address: `base_url`, else ``DOCKER_HOST``, else Docker's own socket."""
    return base_url or os.environ.get("DOCKER_HOST") or DEFAULT_HOST


def is_local(url: str) -> bool:
    """The engine runs on this machine (its containers are processes here, so their namespaces can be entered)."""
    return url.startswith("unix://") or url.split("://", 1)[-1].split(":", 1)[0] in ("127.0.0.1", "localhost")


def connect(base_url: str | None, timeout: float | None) -> docker.DockerClient:
    """A client of the engine at `base_url` (``DOCKER_HOST`` and its TLS settings when None)."""
    try:
        if base_url:
            return docker.DockerClient(base_url=base_url, version=API_VERSION, timeout=timeout)
        return docker.from_env(version=API_VERSION, timeout=timeout)
    except docker.errors.DockerException as exc:
        raise InfraFailure(unreachable(engine_url(base_url), exc)) from exc


def unreachable(url: str, exc: BaseException) -> str:
    """The sentence for an engine that does not answer."""
    return (
        f"No Docker engine answers at DOCKER_HOST={url} ({_short(exc)}); start one (dockerd, or "
        "`podman system service`) or point DOCKER_HOST at it."
    )


def call(url: str, doing: str, work: Callable[[], T]) -> T:
    """`work()`, with the engine's failures turned into one `InfraFailure` sentence about `doing`."""
    try:
        return work()
    except (requests.exceptions.ConnectionError, ConnectionError) as exc:
        raise InfraFailure(unreachable(url, exc)) from exc
    except docker.errors.APIError as exc:
        said = exc.explanation or str(exc)
        msg = f"The Docker engine at {url} failed {doing}: {_short(said)}."
        raise InfraFailure(msg) from exc
    except docker.errors.DockerException as exc:
        msg = f"The Docker engine at {url} failed {doing}: {_short(exc)}."
        raise InfraFailure(msg) from exc


def _short(said: object) -> str:
    text = " ".join(str(said).split())
    return text[:300].rstrip(".")
