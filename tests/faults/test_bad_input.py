"""Bad input to every command and every installed adapter: one sentence, exit 2, no traceback.

Each case runs the real CLI in this process (click's runner: the same code path as the `nenyax` program
minus the interpreter's start, which the table would otherwise pay some sixty times) with every
distribution installed. The cases are listed in tests/faults/README.md; the adapters' own suites
(`packages/*/tests/test_bad_input.py`) try their formats' failures in depth, against real servers.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from nenyax.cli.main import cli

RG = "reasoning_gym:basic_arithmetic?size=3"


def broken_files(root):
    """The broken inputs a user hands the CLI: configs, manifests, task folders, runs."""
    (root / "broken.toml").write_text("this is [not toml")
    (root / "secret.toml").write_text('[provider]\napi_key = "sk-live-123"\n')
    (root / "not-a-run").mkdir()
    (root / "empty.jsonl").write_text("")
    (root / "harbor-task").mkdir()
    (root / "harbor-task" / "task.toml").write_text("version = [broken")
    (root / "rows.jsonl").write_text('{"neither": "question nor answer"}\n')
    return root


CASES = {
    # command-level mistakes
    "unknown command": ["evl", RG],
    "unknown option": ["eval", RG, "--no-such-option"],
    "unknown provider": ["try", RG, "--model", "nosuch:model"],
    "unknown built-in policy": ["eval", RG, "--policy", "genius"],
    "non-positive --tasks": ["eval", RG, "--tasks", "0"],
    "negative --timeout": ["try", RG, "--timeout", "-1"],
    "unknown backend": ["eval", RG, "--backend", "cloud"],
    "bad --param": ["eval", RG, "--param", "temperature"],
    "config that does not parse": ["eval", RG, "--config", "{root}/broken.toml"],
    "config holding a secret": ["eval", RG, "--config", "{root}/secret.toml"],
    "resume of a folder that is no run": ["eval", "--resume", "{root}/not-a-run"],
    "unknown task id (try)": ["try", RG, "--task", "no/such/task", "--policy", "reference"],
    "unknown task id (eval)": ["eval", RG, "--task-ids", "no/such/task", "--policy", "reference"],
    "check --require of no tier": ["check", RG, "--require", "legendary"],
    "unknown learner": ["train", RG, "--learner", "magic"],
    "bad learner option": ["train", RG, "--learner", "incontext", "--option", "lr"],
    "serve an unknown URI": ["serve", "nosuch:env"],
    "export of a missing source": ["export", "{root}/missing"],
    "export of an empty file": ["export", "{root}/empty.jsonl"],
    "export to no exporter": ["export", "{root}/empty.jsonl", "--to", "csv"],
    "export of no row shape": ["export", "{root}/empty.jsonl", "--rows", "tokens"],
    "view of a missing run": ["view", "{root}/missing"],
    "view of a folder that is no run": ["view", "{root}/not-a-run"],
    "list of an unknown adapter": ["list", "nosuch"],
    "new-plugin of no kind": ["new-plugin", "gadget", "x", "--out", "{root}/plugin"],
    "adapter-check of no adapter": ["adapter-check", "nosuch"],
    "judge-check of no judge": ["judge-check", "nosuch"],
    "learner-check of no learner": ["learner-check", "nosuch"],
    "exporter-check of no exporter": ["exporter-check", "nosuch"],
    "tracer of no name": ["eval", RG, "--policy", "reference", "--trace", "nosuch"],
    # URIs, and each adapter's own mistakes
    "URI without a scheme": ["check", "basic_arithmetic"],
    "unknown scheme": ["check", "nosuch:env"],
    "empty target": ["check", "reasoning_gym:"],
    "unknown reasoning-gym dataset": ["check", "reasoning_gym:no_such_dataset"],
    "bad reasoning-gym size": ["check", "reasoning_gym:basic_arithmetic?size=-4"],
    "unknown URI parameter": ["check", "reasoning_gym:basic_arithmetic?colour=blue"],
    "unknown gymnasium id": ["check", "gymnasium:CartPol-v1"],
    "openenv URL that is not http": ["check", "openenv:ftp://example"],
    "nemo_gym rows that are not rows": ["check", "nemo_gym:{root}/rows.jsonl?server=http://127.0.0.1:9"],
    "nemo_gym server without its rows": ["check", "nemo_gym:http://127.0.0.1:9"],
    "verifiers environment that does not exist": ["check", "verifiers:no_such_environment"],
    "unknown lm-eval task": ["check", "lm_eval:no_such_task"],
    "hf dataset file that does not exist": ["check", "hf:{root}/missing.jsonl"],
    "hf dataset without a judge": ["check", "hf:{root}/rows.jsonl?judge=psychic"],
    "harbor folder that does not exist": ["check", "harbor:{root}/missing-task"],
    "harbor task.toml that does not parse": ["check", "harbor:{root}/harbor-task"],
    "hud file that does not exist": ["check", "hud:{root}/missing.py"],
}

# Not the user's mistake but the world's: a server that is down, an environment this machine cannot
# make. The command ran and failed (exit 1), in one sentence, and `check` says which tier it stopped at.
FAILURES = {
    "gymnasium env that cannot load here": ["check", "gymnasium:Ant-v2"],
    "openenv server that is down": ["check", "openenv:http://127.0.0.1:9"],
    "ors server that is down": ["try", "ors:http://127.0.0.1:9", "--policy", "null"],
}


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return broken_files(tmp_path_factory.mktemp("bad"))


def invoke(args, root):
    return CliRunner().invoke(cli, [a.replace("{root}", str(root)) for a in args], prog_name="nenyax")


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_is_one_sentence_exit_2_no_traceback(case, root, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = invoke(CASES[case], root)
    said = result.stderr.strip()
    assert result.exit_code == 2, f"{case}: exit {result.exit_code}\n{said}"
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in said
    lines = [line for line in said.splitlines() if line.strip()]
    assert lines, f"{case}: nothing said"
    # One sentence: the error line, after at most click's usage lines and a "did you mean" hint.
    errors = [line for line in lines if line.startswith("Error:")]
    assert len(errors) == 1, said
    assert len(errors[0]) > len("Error: ") + 10, said


@pytest.mark.parametrize("case", list(FAILURES))
def test_a_failure_of_the_world_is_exit_1_said_once_no_traceback(case, root):
    result = invoke(FAILURES[case], root)
    assert result.exit_code == 1, f"{case}: exit {result.exit_code}\n{result.output}"
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    assert result.output.count("Error:") <= 1  # said once
    reasons = [line for line in result.output.splitlines() if line.startswith("Error:") or "failed" in line]
    reasons += [line for line in result.output.splitlines() if "Could not connect" in line]
    assert reasons, result.output
