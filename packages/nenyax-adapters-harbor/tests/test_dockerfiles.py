"""Tasks as `harbor init --task` writes them, and Dockerfiles that set their task up: played the way harbor's
own runner plays them, in the bwrap sandbox (which builds no images, so the set-up is replayed), or refused
in one sentence as an infrastructure failure, never a score.

`harbor init` is harbor's own CLI, run here; its scaffold's verifier mode is ``separate``: the verifier
runs in a sandbox of its own, made from ``tests/Dockerfile`` (``COPY . /tests/`` puts the tests in).
"""

import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from support import uri

from nenyax.core import Status, UsageError, load

PASSING_TEST = """#!/bin/bash
if [ "$(cat /app/hello.txt 2>/dev/null)" = "Hello, world!" ]; then echo 1 > /logs/verifier/reward.txt
else echo 0 > /logs/verifier/reward.txt; fi
"""

SCAFFOLD_TESTS_DOCKERFILE = """FROM python:3.12-slim

COPY --from=ghcr.io/astral-sh/uv:0.9.7 /uv /usr/local/bin/uv

RUN uv pip install --system pytest==8.4.1 pytest-json-ctrf==0.3.5

WORKDIR /app

COPY . /tests/
"""
"""harbor 0.26's `init` template for tests/Dockerfile, verbatim."""


def _harbor_init(folder: Path, name="probe/hello") -> Path:
    harbor = Path(sys.executable).with_name("harbor")
    cli = [str(harbor)] if harbor.exists() else [shutil.which("harbor") or "harbor"]
    done = subprocess.run([*cli, "init", name, "-t"], cwd=folder, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    task = folder / name.split("/")[-1]
    config = (task / "task.toml").read_text()
    if 'environment_mode = "separate"' not in config:
        # harbor < 0.26 scaffolds a shared verifier (its trials run separate ones all the same): write what
        # 0.26's init adds, so each harbor version plays the scaffold of today.
        assert version("harbor") < "0.26", config
        (task / "task.toml").write_text(config.replace("[verifier]\n", '[verifier]\nenvironment_mode = "separate"\n'))
        (task / "tests" / "Dockerfile").write_text(SCAFFOLD_TESTS_DOCKERFILE)
    assert (task / "tests" / "Dockerfile").is_file()
    return task


def _fill_in(task: Path) -> None:
    """What a task author adds to the scaffold: the prompt, a solution, an offline verifier whose image only
    needs the tests, and the agent's file as an artifact (all a separate verifier sees of the agent's work)."""
    (task / "instruction.md").write_text("Create /app/hello.txt holding 'Hello, world!'.\n")
    (task / "solution" / "solve.sh").write_text("#!/bin/bash\necho 'Hello, world!' > /app/hello.txt\n")
    (task / "tests" / "test.sh").write_text(PASSING_TEST)
    (task / "tests" / "Dockerfile").write_text("FROM debian:bookworm-slim\nWORKDIR /app\nCOPY . /tests/\n")
    config = (task / "task.toml").read_text().replace("artifacts = []", 'artifacts = ["/app/hello.txt"]')
    (task / "task.toml").write_text(config)


def test_harbor_init_s_separate_verifier_gets_its_tests_and_grades(tmp_path):
    task = _harbor_init(tmp_path)
    _fill_in(task)
    env = load(uri(task))
    solved, idle = env.rollout("reference"), env.rollout("null")
    assert solved.status is Status.OK, solved.error
    assert solved.judgment.score == 1.0
    assert idle.status is Status.OK, idle.error
    assert idle.judgment.score == 0.0
    assert solved.info["sandbox"]["dockerfile_replayed"] is True


def test_harbor_init_s_scaffold_as_written_is_refused_in_one_sentence_never_scored(tmp_path):
    # Its tests/Dockerfile copies uv from another image and pip-installs pytest: nothing bwrap can set up,
    # which is known before anything runs, so load says so (the first line `check` and `try` print).
    task = _harbor_init(tmp_path)
    with pytest.raises(UsageError) as raised:
        load(uri(task))
    text = str(raised.value)
    assert text.startswith("The task's tests/Dockerfile cannot be set up in the bwrap sandbox")
    assert "copies from another image (--from=ghcr.io/astral-sh/uv" in text
    assert "\n" not in text


def test_check_and_try_say_it_in_their_first_line(tmp_path):
    task = _harbor_init(tmp_path)
    nenyax = Path(sys.executable).with_name("nenyax")
    for command in (["check", uri(task)], ["try", uri(task), "--policy", "reference"]):
        done = subprocess.run([str(nenyax), *command], capture_output=True, text=True, timeout=300, cwd=tmp_path)
        first = (done.stdout + done.stderr).strip().splitlines()[0]
        assert done.returncode == 2, done.stdout + done.stderr
        assert "tests/Dockerfile cannot be set up in the bwrap sandbox" in first


def _set_up_by_dockerfile(copy_task, dockerfile: str):
    task = copy_task("hello-file")
    (task / "environment" / "data").mkdir()
    (task / "environment" / "data" / "greeting.txt").write_text("Hello, world!\n")
    (task / "environment" / "Dockerfile").write_text(dockerfile)
    # The solution relies on what the Dockerfile set up, as most tasks' solutions do.
    (task / "solution" / "solve.sh").write_text(
        '#!/bin/bash\n. /opt/greet/env.sh\ncp "$GREETING_FILE" /app/hello.txt\n'
    )
    return task


SETS_UP = """FROM debian:bookworm-slim
ENV GREETING_DIR=/srv/data
WORKDIR /app
COPY data/ ${GREETING_DIR}/
RUN mkdir -p /opt/greet \\
 && echo "GREETING_FILE=$GREETING_DIR/greeting.txt" > /opt/greet/env.sh
"""


def test_a_dockerfile_s_copy_run_and_env_are_set_up_before_the_agent(copy_task):
    traj = load(uri(_set_up_by_dockerfile(copy_task, SETS_UP))).rollout("reference")
    assert traj.status is Status.OK, traj.error
    assert traj.judgment.score == 1.0
    assert "replayed" in traj.info["sandbox"]["note"]


def test_a_run_that_fails_is_an_infra_error_saying_which_line(copy_task):
    task = _set_up_by_dockerfile(copy_task, SETS_UP + "RUN apt-get install -y --no-download jq-not-here\n")
    traj = load(uri(task)).rollout("reference")
    assert traj.status is Status.INFRA_ERROR
    assert traj.judgment is None
    assert "environment/Dockerfile cannot be set up in the bwrap sandbox" in traj.error
    assert "its RUN at line 7 failed (exit" in traj.error
    # check and try put it in their first line (then check names it once, pointing the later failures to it).
    nenyax = Path(sys.executable).with_name("nenyax")
    for command in (["check", uri(task)], ["try", uri(task), "--policy", "reference"]):
        done = subprocess.run([str(nenyax), *command], capture_output=True, text=True, timeout=300, cwd=task)
        first = done.stdout.strip().splitlines()[0]
        assert done.returncode == 1, done.stdout + done.stderr
        assert first.startswith("No episode could start: "), done.stdout
        assert "its RUN at line 7 failed (exit" in first
        if command[0] == "check":
            assert "Failed: evaluable/episode-completes: the same cause as connectable/episode-starts." in done.stdout


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("ADD https://example.com/x.tar.gz /opt/", "ADDs a URL or an archive"),
        ("COPY missing/ /opt/", "copies missing/, which the build context"),
        ("FROM debian:bookworm-slim AS second", "starts a second build stage"),
    ],
)
def test_a_dockerfile_that_cannot_be_replayed_is_refused_at_load(copy_task, line, said):
    with pytest.raises(UsageError) as raised:
        load(uri(_set_up_by_dockerfile(copy_task, SETS_UP + line + "\n")))
    assert said in str(raised.value)
    assert "environment/Dockerfile cannot be set up in the bwrap sandbox" in str(raised.value)
