"""harbor absent, or installed but broken: each is one sentence at load, never hidden behind the other.

The broken install is real: an `openai` too old for the litellm harbor's terminus-2 uses (what nemo-gym
0.4.0's pin does to a shared environment) is put first on the path of a fresh interpreter, so harbor
itself imports and terminus-2 does not.
"""

import os
import subprocess
import sys

from nenyax.adapters.harbor._missing import not_installed
from nenyax.adapters.harbor.adapter import example_task

LOAD = "from nenyax.core import load; load({uri!r})"
MODEL_EPISODE = (
    "from nenyax.core import load; t = load({uri!r}).rollout(lambda messages: '{{}}'); "
    "print('STATUS', t.status.value, t.judgment); print('ERROR', t.error)"
)


def _load_in_fresh_python(tmp_path, prelude="", pythonpath=None, code=LOAD):
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join([str(pythonpath), env.get("PYTHONPATH", "")])
    code = prelude + code.format(uri=example_task("hello-file"))
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=180, env=env, cwd=tmp_path, check=False
    )


def test_harbor_installed_but_broken_says_which_import_failed_and_why(tmp_path):
    old_openai = tmp_path / "old" / "openai"
    old_openai.mkdir(parents=True)
    (old_openai / "__init__.py").write_text('__version__ = "2.7.2"\n')
    done = _load_in_fresh_python(tmp_path, pythonpath=old_openai.parent, code=MODEL_EPISODE)
    last = done.stderr.strip().splitlines()[-1]
    assert "STATUS" not in done.stdout  # the episode raises the sentence: no status, no score
    assert "UsageError: Importing harbor's terminus-2 agent" in last, done.stderr[-3000:]
    assert "openai._models" in last  # why: the module the too-old openai lacks
    assert "not installed" not in last
    assert "DEFAULT_SETUP_TIMEOUT_SEC" not in done.stderr  # what the 3.11 stand-in made of it


def test_harbor_absent_says_how_to_install_it(tmp_path):
    # `None` in sys.modules is how Python itself spells a module that cannot be imported.
    done = _load_in_fresh_python(tmp_path, prelude="import sys; sys.modules['harbor'] = None; ")
    last = done.stderr.strip().splitlines()[-1]
    assert done.returncode != 0
    assert last.endswith(
        "harbor tasks need the harbor package, which is not installed: pip install 'harbor>=0.23,<0.27'."
    )


def test_on_python_3_11_the_sentence_says_harbor_needs_3_12():
    sentence = not_installed((3, 11, 7))
    assert "needs Python >= 3.12 (this is Python 3.11.7)" in sentence
    assert "pip install nenyax-adapters-harbor 'harbor>=0.23,<0.27'" in sentence
    assert "\n" not in sentence
    assert sentence.endswith(".")
