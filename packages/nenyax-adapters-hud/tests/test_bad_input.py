"""User mistakes get one sentence, whether hud is installed or not."""

import subprocess
import sys

import pytest
from support import task_uri

from nenyax.core import BadURIError, UsageError, load


def _one_sentence(exc):
    text = str(exc)
    assert "\n" not in text
    assert text.rstrip().endswith((".", "?", ")"))


@pytest.mark.parametrize(
    "uri",
    ["hud:", "hud:a b", "hud:nenyax.adapters.hud.example:arithmetic?max_steps=0", "hud:json?foo=1", "hud:x?answer="],
)
def test_malformed_uris_are_one_sentence(uri):
    with pytest.raises(BadURIError) as raised:
        load(uri)
    _one_sentence(raised.value)


@pytest.mark.hud
@pytest.mark.parametrize(
    ("uri", "said"),
    [
        ("hud:no_such_module_anywhere", "no_such_module_anywhere"),
        ("hud:nenyax.adapters.hud.example:arithmetc", "arithmetic"),  # a close name is suggested
        ("hud:json", "holds no hud tasks"),
        ("hud:json:dumps", "not a hud Task"),
        ("hud:/no/such/tasks.py", "no Python file"),
    ],
)
def test_what_names_no_tasks_says_so(uri, said):
    with pytest.raises(BadURIError) as raised:
        load(uri)
    assert said in str(raised.value)
    _one_sentence(raised.value)


@pytest.mark.hud
def test_an_unknown_task_id_suggests_close_ones():
    env = load(task_uri("odd", "words"))
    with pytest.raises(BadURIError) as raised:
        env.rollout("reference", task="echo-nothing")
    _one_sentence(raised.value)


@pytest.mark.hud
def test_a_file_that_fails_to_import_is_one_sentence(tmp_path):
    bad = tmp_path / "bad_tasks.py"
    bad.write_text("import hud\nraise ValueError('not today')\n")
    with pytest.raises(UsageError) as raised:
        load(f"hud:{bad}")
    assert "not today" in str(raised.value)
    _one_sentence(raised.value)


@pytest.mark.hud
def test_the_reference_of_a_taskset_without_answers_is_refused():
    # Core classifies a policy that cannot answer as the episode's unscored failure, never a 0.
    traj = load("hud:nenyax.adapters.hud.example:haiku").rollout("reference")
    assert traj.status.value != "ok"
    assert traj.judgment is None
    assert "no 'answer' column, so no reference policy" in traj.error


def test_missing_hud_says_how_to_install():
    # A fresh interpreter where `hud` cannot be found (a meta-path hook and metadata both hide it).
    code = (
        "import sys, importlib.abc, importlib.metadata as md\n"
        "class Hide(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'hud' or name.startswith('hud.'): raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, Hide())\n"
        "real = md.version\n"
        "md.version = lambda n: (_ for _ in ()).throw(md.PackageNotFoundError(n)) if n in ('hud', 'hud-python') else real(n)\n"
        "from nenyax.core import load, UsageError\n"
        "try: load('hud:anything')\n"
        "except UsageError as e: print(e)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert "pip install 'hud>=0.6.21,<0.7'" in done.stdout
    assert done.stdout.count("\n") == 1


def test_a_package_installed_but_broken_is_not_called_missing(tmp_path, monkeypatch):
    # Finding `broken_pkg.tasks` imports `broken_pkg`, whose own import fails: that is the sentence, not
    # "no module is importable, install it".
    package = tmp_path / "nx_broken_hud_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from json import no_such_name\n")
    (package / "tasks.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(UsageError) as raised:
        load("hud:nx_broken_hud_pkg.tasks")
    text = str(raised.value)
    assert "Importing 'nx_broken_hud_pkg.tasks' failed although it is installed" in text
    assert "no_such_name" in text
    assert "install it" not in text
    _one_sentence(raised.value)
