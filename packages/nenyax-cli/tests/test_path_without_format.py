"""A data or task file given where a URI goes (``nenyax check ./qa.jsonl``) is answered with the URI that reads it."""

import subprocess
import sys

import pytest

from nenyax.core.toolkit.suggest import uri_for_path


def nenyax(*args):
    return subprocess.run([sys.executable, "-m", "nenyax.cli", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    ("command", "given", "suggested"),
    [
        ("check", "./qa.jsonl", "hf:./qa.jsonl"),
        ("try", "data/qa.csv", "hf:data/qa.csv"),
        ("eval", "/tmp/qa.parquet", "hf:/tmp/qa.parquet"),
        ("check", "my_task.yaml?num_fewshot=3", "lm_eval:my_task.yaml?num_fewshot=3"),
        ("check", "tasks.JSON", "hf:tasks.JSON"),
    ],
)
def test_a_file_without_a_format_gets_the_uri_that_reads_it(command, given, suggested):
    done = nenyax(command, given, "--policy", "null") if command != "check" else nenyax(command, given)
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith(f"Error: {given!r} is not an environment URI")
    assert f"Did you mean {suggested!r}" in line
    assert "Traceback" not in done.stderr


def test_the_suggestion_comes_with_json_too():
    done = nenyax("check", "./qa.jsonl", "--json")
    assert done.returncode == 2
    assert "Did you mean 'hf:./qa.jsonl'" in done.stdout


def test_a_json_file_names_hud_as_the_other_reading():
    assert "a HUD taskset file is 'hud:./tasks.json'" in uri_for_path("./tasks.json")


@pytest.mark.parametrize("word", ["gsm8k", "./notes.txt", "runs.d/x", ".jsonl"])
def test_no_suggestion_for_what_is_no_known_file(word):
    assert uri_for_path(word) == ""
