"""Bad input gets one sentence and a non-zero exit: not a folder, not a karotte environment, a task or an
option that does not exist, a runtime that cannot play here."""

import pytest
from support import EXAMPLE, nenyax

from nenyax.core import BadURIError, UsageError, load

pytestmark = pytest.mark.karotte


def _one_sentence(done):
    assert done.returncode != 0
    assert "Traceback" not in done.stderr + done.stdout
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    return lines


def test_a_folder_that_does_not_exist(tmp_path):
    with pytest.raises(BadURIError, match="is not a folder; name a karotte environment"):
        load(f"karotte:{tmp_path / 'nowhere'}")


def test_a_folder_that_is_not_a_karotte_environment(tmp_path):
    (tmp_path / "Containerfile").write_text("FROM scratch\n")
    with pytest.raises(BadURIError, match="is not a karotte environment: it has no src/environment package"):
        load(f"karotte:{tmp_path}")


def test_a_task_that_does_not_exist_gets_a_did_you_mean():
    with pytest.raises(BadURIError, match=r"'count-word' is not a task of .*Did you mean 'count-words'"):
        load(f"karotte:{EXAMPLE}?task=count-word")


def test_an_unknown_option_and_an_unknown_runtime():
    with pytest.raises(BadURIError, match="turn_limt"):
        load(f"karotte:{EXAMPLE}?turn_limt=3")
    with pytest.raises(BadURIError, match="runtime"):
        load(f"karotte:{EXAMPLE}?runtime=kvm")


def test_an_environment_whose_task_discovery_fails_says_karottes_words(tmp_path):
    env = tmp_path / "broken"
    (env / "src" / "environment").mkdir(parents=True)
    (env / "Containerfile").write_text("FROM scratch\n")
    (env / "src" / "environment" / "__init__.py").write_text("raise ImportError('no such helper: tasks_lib')\n")
    with pytest.raises(UsageError, match=r"karotte could not list the tasks of .*no such helper: tasks_lib"):
        load(f"karotte:{env}")


def test_the_cli_says_one_sentence_for_a_missing_task():
    done = nenyax("try", f"karotte:{EXAMPLE}?task=nope", "--policy", "reference")
    lines = _one_sentence(done)
    assert any("'nope' is not a task of" in line for line in lines), done.stderr


@pytest.mark.parametrize(("runtime", "said"), [("modal", "runs the container on Modal"), ("firecracker", "/dev/kvm")])
def test_a_runtime_that_cannot_play_here_is_refused_before_anything_runs(runtime, said):
    done = nenyax("try", f"karotte:{EXAMPLE}?task=count-words&runtime={runtime}", "--policy", "null")
    lines = _one_sentence(done)
    assert any(said in line and "?runtime=podman" in line for line in lines), done.stderr
