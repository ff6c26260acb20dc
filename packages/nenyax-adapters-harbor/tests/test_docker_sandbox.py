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


APT_DOCKERFILE = """FROM debian:bookworm-slim
WORKDIR /app
COPY data/ /srv/data/
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends jq > /dev/null
"""
"""The usual way a task sets itself up: its tools installed with apt, its data copied in."""


def test_a_dockerfile_that_apt_installs_its_tools_is_built_with_the_network_as_harbor_builds_it(copy_task):
    task = copy_task("hello-file")
    (task / "environment" / "data").mkdir()
    (task / "environment" / "data" / "greeting.json").write_text('{"greeting": "Hello, world!"}\n')
    (task / "environment" / "Dockerfile").write_text(APT_DOCKERFILE)
    (task / "solution" / "solve.sh").write_text(
        "#!/bin/bash\njq -r .greeting /srv/data/greeting.json > /app/hello.txt\n"
    )
    env = load(uri(task, "sandbox=docker"))
    traj = env.rollout("reference")
    assert traj.status is Status.OK, traj.error
    assert traj.judgment.score == 1.0
    assert traj.info["sandbox"]["dockerfile_built"] is True
    assert env.rollout("null").judgment.score == 0.0
    # (Built with build_network="none", the RUN would fail on Docker Engine; podman 4.3 ignores a build's
    # network mode, which the docker sandbox's own suite measures.)


def test_a_task_s_image_is_built_with_the_network_unless_the_uri_says_otherwise():
    """As harbor's own runner builds it (`docker build` has the network; only the agent's run is cut off)."""
    assert load(HELLO)._sandbox().build_network == "host"
    told = load(uri(EXAMPLES_DIR / "hello-file", 'sandbox=docker&sandbox_options={"build_network":"none"}'))
    assert told._sandbox().build_network == "none"
