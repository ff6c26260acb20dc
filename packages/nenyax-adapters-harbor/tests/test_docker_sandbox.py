"""Harbor tasks in the docker sandbox: a real engine (podman's Docker API, started by the `podman` nox
session, which runs this module), each task's own Dockerfile built offline (``FROM debian:bookworm-slim``,
the locally imported base). Without ``DOCKER_HOST`` it skips, saying so; with ``NENYAX_DOCKER_REQUIRED`` set
(the podman session) it fails instead.
"""

import os

import pytest
from support import uri

from nenyax.adapters.harbor.adapter import EXAMPLES_DIR
from nenyax.core import Status, Tier, check, load

if not os.environ.get("DOCKER_HOST"):
    if os.environ.get("NENYAX_DOCKER_REQUIRED"):
        raise RuntimeError("NENYAX_DOCKER_REQUIRED is set but DOCKER_HOST is not: no engine to test against.")
    pytest.skip("no DOCKER_HOST: the podman nox session runs these", allow_module_level=True)

HELLO = uri(EXAMPLES_DIR / "hello-file", "sandbox=docker")


def test_a_task_reaches_audited_in_the_docker_sandbox():
    report = check(HELLO, samples=2)
    blocking = [(r.id, r.outcome.value, r.evidence) for r in report.results if r.outcome.value != "passed"]
    assert report.tier is Tier.AUDITED, blocking


def test_the_dockerfile_is_built_and_the_oracle_solves_it():
    traj = load(HELLO).rollout("reference")
    assert traj.status is Status.OK, traj.error
    assert traj.judgment.score == 1.0
    assert traj.info["sandbox"]["dockerfile_built"] is True
    assert traj.info["sandbox"]["image_source"] == "environment/Dockerfile"


def test_partial_credit_is_the_same_as_in_bwrap():
    traj = load(uri(EXAMPLES_DIR / "count-lines", "sandbox=docker")).rollout("null")
    assert traj.status is Status.OK, traj.error
    assert traj.judgment.score == 0.0
    assert traj.judgment.components == {"a": 0.0, "b": 0.0, "c": 0.0}
