"""The conventions every command shares: exit codes, --json errors, the bare command, --version, plain help.

Real entry-point discovery in a subprocess, on core's in-memory `arith` fake written to disk as a
distribution (nenyax-cli's tests install no real adapter: the CLI depends on core alone).
"""

import json
import os
import subprocess
import sys

import pytest

from nenyax.cli.main import COMMANDS
from nenyax_testsupport.distributions import write_distribution

PLUGIN = """
from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_adapters():
    return PluginSpec(kind="adapter", name="arith", factory="nenyax_testsupport.fakes:ArithAdapter", summary="fake")
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    return write_distribution(
        tmp_path_factory.mktemp("site"),
        "nenyax-arith",
        "1.2.0",
        {"arith": "nenyax_arith_plugin"},
        {"nenyax_arith_plugin": PLUGIN},
    )


def nenyax(site, *args):
    path = os.pathsep.join([str(site), *([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])])
    env = {**os.environ, "PYTHONPATH": path, "NENYAX_STRICT_PLUGINS": "0"}  # a checkout's sources stay on the path
    return subprocess.run(
        [sys.executable, "-m", "nenyax.cli", *args], capture_output=True, text=True, env=env, timeout=300, check=False
    )


def test_bare_nenyax_prints_the_help_and_succeeds(site):
    done = nenyax(site)
    assert done.returncode == 0, done.stderr
    assert "Usage:" in done.stdout
    assert "Commands:" in done.stdout


def test_help_documents_the_exit_codes(site):
    done = nenyax(site, "--help")
    text = " ".join(done.stdout.split())
    for code in ("0 success", "1 the command ran and the result is a failure", "2 a user error", "130 interrupted"):
        assert code in text


def test_unknown_command_gets_did_you_mean(site):
    done = nenyax(site, "chek", "arith:add")
    assert done.returncode == 2
    assert "Did you mean 'check'" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_version_lists_core_cli_and_every_plugin_distribution(site):
    done = nenyax(site, "--version")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("nenyax-core ")
    assert lines[1].startswith("nenyax-cli ")
    assert "nenyax-arith 1.2.0" in lines


# `view` writes a page and prints its path; it came from another branch without --json (a known gap).
_NO_JSON_YET: set[str] = set()


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(c, marks=pytest.mark.xfail(strict=True, reason="no --json yet")) if c in _NO_JSON_YET else c
        for c in sorted(COMMANDS)
    ],
)
def test_every_help_is_plain_text(site, command):
    done = nenyax(site, command, "--help")
    assert done.returncode == 0, done.stderr
    assert "`" not in done.stdout
    assert "--json" in done.stdout


def test_the_help_promises_only_commands_that_exist(site):
    listed = nenyax(site, "--help").stdout.split("Commands:", 1)[1].split("Exit codes:", 1)[0]
    # A command's line starts at two spaces; a wrapped summary continues further in.
    names = [line.split()[0] for line in listed.splitlines() if line.startswith("  ") and line[2:3] != " "]
    assert names == sorted(COMMANDS)
    for name in names:
        assert nenyax(site, name, "--help").returncode == 0


@pytest.mark.parametrize(
    "args",
    [
        ["check", "arith:nope", "--json"],
        ["check", "arith:add", "--json", "--samples", "0"],
        ["try", "nosuch:x", "--policy", "null", "--json"],
        ["try", "arith:add", "--json", "--bogus"],
        ["plugins", "--json", "extra"],
        ["adapter-check", "arth", "--json"],
        ["sandbox-check", "nosuch", "--json"],
        ["judge-check", "nosuch", "--json"],
    ],
)
def test_a_user_error_with_json_prints_a_json_object(site, args):
    done = nenyax(site, *args)
    assert done.returncode == 2
    error = json.loads(done.stdout)["error"]
    assert error["kind"] == "usage"
    assert error["exit_code"] == 2
    assert error["message"].endswith((".", "?"))
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("option", ["--html", "--save"])
def test_an_unwritable_output_path_is_one_sentence_before_the_episode(site, tmp_path, option):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    target = blocker / "out.file"
    done = nenyax(site, "try", "arith:add", "--policy", "reference", option, str(target))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        f"Error: {option} {target} cannot be written: {blocker} is a file, not a folder."
    ]
    assert done.stdout == ""  # no episode was played


def test_an_output_path_that_is_a_folder(site, tmp_path):
    done = nenyax(site, "try", "arith:add", "--policy", "reference", "--html", str(tmp_path))
    assert done.returncode == 2
    assert "is a directory" in done.stderr
    assert str(tmp_path) in done.stderr
