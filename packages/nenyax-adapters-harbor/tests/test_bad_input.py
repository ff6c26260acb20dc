"""Broken tasks and sandboxes: one sentence naming the file and field, or the right failure status."""

import pytest
from support import uri

from nenyax.core import BadURIError, Status, UsageError, load


def _one_sentence(exc):
    text = str(exc)
    assert "\n" not in text, text
    assert text.rstrip().endswith((".", "?", ")")), text


@pytest.mark.parametrize(
    ("missing", "named"),
    [("instruction.md", "instruction.md"), ("tests/test.sh", "tests/test.sh"), ("task.toml", "task.toml")],
)
def test_a_missing_file_is_named(copy_task, missing, named):
    task = copy_task("hello-file")
    (task / missing).unlink()
    with pytest.raises(BadURIError) as raised:
        load(uri(task))
    assert named in str(raised.value)
    _one_sentence(raised.value)


def test_a_missing_environment_folder_is_named(copy_task):
    task = copy_task("hello-file")
    for path in (task / "environment").iterdir():
        path.unlink()
    (task / "environment").rmdir()
    with pytest.raises(BadURIError) as raised:
        load(uri(task))
    assert "environment/" in str(raised.value)
    _one_sentence(raised.value)


def test_toml_that_does_not_parse_names_the_file(copy_task):
    task = copy_task("hello-file")
    (task / "task.toml").write_text('schema_version = "1.4"\n[verifier\ntimeout_sec = 30\n')
    with pytest.raises(BadURIError) as raised:
        load(uri(task))
    assert "task.toml" in str(raised.value)
    assert "TOML" in str(raised.value)
    _one_sentence(raised.value)


def test_an_invalid_field_is_named(copy_task):
    task = copy_task("hello-file")
    text = (task / "task.toml").read_text().replace("timeout_sec = 30.0", 'timeout_sec = "soon"')
    (task / "task.toml").write_text(text)
    with pytest.raises(BadURIError) as raised:
        load(uri(task))
    assert "task.toml" in str(raised.value)
    assert "verifier.timeout_sec" in str(raised.value)
    _one_sentence(raised.value)


@pytest.mark.parametrize(
    "query",
    ["nonsense=1", "max_turns=0", "sandbox_options=3", "agent_timeout=-1"],
)
def test_bad_options_are_one_sentence(copy_task, query):
    with pytest.raises(BadURIError) as raised:
        load(uri(copy_task("hello-file"), query))
    _one_sentence(raised.value)


def test_an_unknown_sandbox_or_option_fails_at_load(copy_task):
    task = copy_task("hello-file")
    with pytest.raises(UsageError) as raised:
        load(uri(task, "sandbox=no-such-sandbox"))
    _one_sentence(raised.value)
    with pytest.raises(UsageError) as raised:
        load(uri(task, 'sandbox_options={"colour":"blue"}'))
    _one_sentence(raised.value)


def test_folders_that_hold_no_task(tmp_path):
    for target in (tmp_path / "nowhere", tmp_path):
        with pytest.raises(BadURIError) as raised:
            load(uri(target))
        _one_sentence(raised.value)


def test_a_verifier_that_writes_no_reward_is_a_verifier_error(copy_task):
    task = copy_task("hello-file")
    (task / "tests" / "test.sh").write_text("#!/bin/bash\necho 'graded nothing'\n")
    traj = load(uri(task)).rollout("reference")
    assert traj.status is Status.VERIFIER_ERROR
    assert traj.judgment is None  # never a reward of 0
    assert "RewardFileNotFoundError" in traj.error


def test_a_sandbox_that_cannot_start_is_an_infra_error(copy_task):
    # /bin/false in bwrap's place: the backend is made, but no sandbox it starts ever runs.
    env = load(uri(copy_task("hello-file"), 'sandbox_options={"bwrap":"/bin/false"}'))
    for policy in ("reference", "null"):
        traj = env.rollout(policy)
        assert traj.status is Status.INFRA_ERROR
        assert traj.judgment is None
        assert "did not start" in traj.error


def test_an_agent_past_its_timeout_is_graded_on_what_it_left(copy_task):
    task = copy_task("hello-file")
    (task / "solution" / "solve.sh").write_text("#!/bin/bash\nsleep 30\necho 'Hello, world!' > /app/hello.txt\n")
    traj = load(uri(task, "agent_timeout=1")).rollout("reference")
    assert traj.status is Status.OK  # harbor grades after an agent timeout, as it does on its own
    assert traj.judgment.score == 0.0
    assert traj.info["exception"]["type"] == "AgentTimeoutError"
