"""Failures: user mistakes are one sentence; a failed model call is infra_error; lm-eval's crash is env_error."""

import json
import os
import subprocess
import sys

import pytest
from support import TASKS, task_uri

from nenyax.core import BadURIError, InfraFailure, Status, UsageError, load
from nenyax.core.toolkit.cache import cache_root
from nenyax_testsupport.policies import Outage


def _one_sentence(exc):
    text = str(exc)
    assert "\n" not in text
    assert text.rstrip().endswith((".", "?", ")"))


@pytest.mark.lm_eval
def test_a_model_outage_is_infra_error_never_a_score():
    for uri, task in ((task_uri("gsm_style"), "gsm_style/0"), (task_uri("colors"), "colors/0")):
        outage = Outage()
        traj = load(uri).rollout(outage, task=task)
        assert traj.status is Status.INFRA_ERROR, (uri, traj.status, traj.error)
        assert traj.judgment is None
        assert outage.calls == 1  # lm-eval stopped at the first failed call: nothing scored its absence


@pytest.mark.lm_eval
def test_lm_evals_crash_in_the_loop_is_env_error_with_the_episode_kept():
    traj = load(task_uri("crash")).rollout("reference", task="crash_task/1")
    assert traj.status is Status.ENV_ERROR
    assert traj.judgment is None
    assert "process_results is broken" in traj.error
    assert len(traj.model_calls) == 1  # the call the loop made before lm-eval crashed is recorded


@pytest.mark.lm_eval
def test_an_unknown_task_is_one_sentence_with_close_names():
    with pytest.raises(BadURIError) as raised:
        load("lm_eval:nenyax_arithh")
    assert "nenyax_arith" in str(raised.value)
    _one_sentence(raised.value)


@pytest.mark.lm_eval
def test_a_bundled_task_offline_is_an_infrastructure_failure_naming_what_it_could_not_fetch():
    with pytest.raises(InfraFailure) as raised:
        load("lm_eval:arithmetic_1dc")
    assert not isinstance(raised.value, UsageError)  # the URI is right: the machine cannot download
    assert "huggingface.co/api/datasets/EleutherAI/arithmetic" in str(raised.value)
    assert "could not download (HF_HUB_OFFLINE is set)" in str(raised.value)
    _one_sentence(raised.value)


@pytest.mark.lm_eval
def test_a_blocked_download_exits_1_from_the_cli_with_one_sentence_and_no_reward(tmp_path):
    env = {**os.environ, "HOME": str(tmp_path), "NENYAX_CACHE_DIR": str(cache_root())}  # the converted model kept
    done = subprocess.run(
        [sys.executable, "-c", "from nenyax.cli.main import run; run()", "try", "lm_eval:arithmetic_1dc", "--json"],
        capture_output=True,
        text=True,
        timeout=280,
        env=env,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    error = json.loads(done.stdout)["error"]
    assert error["kind"] == "error"
    assert "could not download" in error["message"]
    assert "reward" not in done.stdout
    assert "Traceback" not in done.stderr


@pytest.mark.lm_eval
def test_nltk_data_a_task_file_needs_at_import_is_an_infrastructure_failure():
    with pytest.raises(InfraFailure) as raised:
        load(task_uri("nltk_import"))
    assert not isinstance(raised.value, UsageError)
    assert "nltk's 'nenyax_absent' data" in str(raised.value)
    assert "python -m nltk.downloader nenyax_absent" in str(raised.value)
    _one_sentence(raised.value)


@pytest.mark.lm_eval
def test_nltk_data_missing_when_scoring_is_infra_error_never_a_score():
    traj = load(task_uri("nltk_scoring")).rollout("reference", task="nltk_scoring_task/0")
    assert traj.status is Status.INFRA_ERROR, (traj.status, traj.error)
    assert traj.judgment is None
    assert "nltk's 'nenyax_absent' data" in traj.error


@pytest.mark.lm_eval
def test_an_unknown_document_is_one_sentence():
    env = load("lm_eval:nenyax_arith")
    with pytest.raises(BadURIError) as raised:
        env.rollout("null", task="nenyax_arith/99")
    _one_sentence(raised.value)


@pytest.mark.parametrize(
    "uri",
    [
        "lm_eval:",
        "lm_eval:nenyax_arith?num_fewshot=-1",
        "lm_eval:nenyax_arith?fewshot=2",
        "lm_eval:nenyax_arith?include_path=/no/such/folder",
        "lm_eval:/no/such/task.yaml",
        f"lm_eval:{TASKS}/crash_utils.py.yaml",
    ],
)
def test_malformed_uris_are_one_sentence(uri):
    with pytest.raises(BadURIError) as raised:
        load(uri)
    _one_sentence(raised.value)


def test_missing_lm_eval_says_how_to_install():
    # A fresh interpreter where `lm_eval` cannot be found (a meta-path hook hides it).
    code = (
        "import sys, importlib.abc, importlib.metadata as md\n"
        "class Hide(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'lm_eval' or name.startswith('lm_eval.'): raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, Hide())\n"
        "real = md.version\n"
        "md.version = lambda n: (_ for _ in ()).throw(md.PackageNotFoundError(n)) if n == 'lm-eval' else real(n)\n"
        "from nenyax.core import load, UsageError\n"
        "try: load('lm_eval:nenyax_arith')\n"
        "except UsageError as e: print(e)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert "pip install lm-eval" in done.stdout
    assert done.stdout.count("\n") == 1


def test_every_module_imports_without_lm_eval():
    code = (
        "import sys, importlib, importlib.abc, pkgutil\n"
        "class Hide(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'lm_eval' or name.startswith('lm_eval.'): raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, Hide())\n"
        "import nenyax.adapters.lm_eval as pkg\n"
        "for m in pkgutil.iter_modules(pkg.__path__): importlib.import_module(f'{pkg.__name__}.{m.name}')\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "ok"
