"""Tests marked ``engine`` need a Docker Engine API at DOCKER_HOST: the `podman` nox session starts one
(podman's compatible service) and sets ``NENYAX_DOCKER_REQUIRED``, so there a missing engine fails them;
elsewhere (the plain `tests` session) they skip, saying why."""

from __future__ import annotations

import functools
import os

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "engine: needs a Docker Engine API at DOCKER_HOST")


@functools.cache
def _engine_problem() -> str | None:
    if not os.environ.get("DOCKER_HOST"):
        return "DOCKER_HOST is not set (the `podman` nox session starts an engine and sets it)"
    import docker

    try:
        client = docker.DockerClient(base_url=os.environ["DOCKER_HOST"], version="1.41", timeout=10)
        client.ping()
        client.close()
    except Exception as exc:  # noqa: BLE001 - whatever it is, it is why these tests cannot run
        return f"no engine answers at DOCKER_HOST={os.environ['DOCKER_HOST']}: {exc}"
    return None


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("engine") is None or (problem := _engine_problem()) is None:
        return
    if os.environ.get("NENYAX_DOCKER_REQUIRED"):
        pytest.fail(f"An engine is required here, and {problem}.")
    pytest.skip(problem)
