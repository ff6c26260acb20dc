"""Rewards come out as harbor's verifier wrote them: pass, fail and partial credit, with components."""

from support import uri

from nenyax.adapters.harbor.adapter import example_task
from nenyax.core import Status, load


def test_the_oracle_passes_and_nop_fails():
    env = load(example_task("hello-file"))
    solved = env.rollout("reference")
    assert solved.status is Status.OK
    assert solved.judgment.score == 1.0
    assert solved.judgment.passed
    assert solved.agent == "reference"
    assert solved.info["harbor_agent"] == "oracle"
    idle = env.rollout("null")
    assert idle.status is Status.OK
    assert idle.judgment.score == 0.0
    assert idle.judgment.passed is False
    assert idle.info["harbor_agent"] == "nop"


def test_reward_json_keys_beside_reward_are_components():
    traj = load(example_task("reverse-words")).rollout("reference")
    assert traj.judgment.score == 1.0
    assert traj.judgment.components == {"exact": 1.0}
    assert traj.judgment.judge == "harbor:verifier"


def test_partial_credit(copy_task):
    task = copy_task("count-lines")
    # A solution that gets one file of three right: a third of the reward, and which one in the components.
    (task / "solution" / "solve.sh").write_text("#!/bin/bash\nmkdir -p /app/data\nseq 3 > /app/data/a.txt\n")
    traj = load(uri(task)).rollout("reference")
    assert traj.status is Status.OK
    assert abs(traj.judgment.score - 1 / 3) < 1e-3
    assert traj.judgment.passed is False
    assert traj.judgment.components == {"a": 1.0, "b": 0.0, "c": 0.0}


def test_the_trajectory_says_the_dockerfile_was_not_built():
    traj = load(example_task("hello-file")).rollout("null")
    sandbox = traj.info["sandbox"]
    assert sandbox["sandbox"] == "bwrap"
    assert sandbox["dockerfile_built"] is False
    assert sandbox["dockerfile_replayed"] is True  # its set-up (here: WORKDIR) was replayed instead
    assert sandbox["workdir"] == "/app"  # the Dockerfile's WORKDIR
    assert "not used" in sandbox["note"]
    assert sandbox["image_digest"].startswith("sha256:")
