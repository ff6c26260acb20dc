"""A README tier table's inputs fingerprint: what decides a score is in it, so a change there re-measures
the whole table instead of a sample of its rows."""

import inspect
import shutil
from pathlib import Path

import pytest

import nenyax_testsupport.tables as tables
from nenyax.core.builtin_plugins.return_judge import ReturnJudge
from nenyax.core.engine.answers import extract_answer
from nenyax.core.engine.qa import QuestionSession
from nenyax.core.engine.session import Session
from nenyax.core.engine.step_loop import run_step_episode
from nenyax_testsupport.tables import TablePlan

ROWS = [f"row{i}" for i in range(30)]


def source_file(obj: object) -> Path:
    found = inspect.getsourcefile(obj)  # type: ignore[arg-type]
    assert found is not None
    return Path(found).resolve()


@pytest.fixture
def copies(tmp_path, monkeypatch):
    """The scoring path's files copied under tmp_path and standing in for the installed ones."""
    made = []
    for file in tables.scoring_path():
        copy = tmp_path / "engine" / file.name
        copy.parent.mkdir(exist_ok=True)
        shutil.copy(file, copy)
        made.append(copy)
    monkeypatch.setattr(tables, "scoring_path", lambda: made)
    return made


@pytest.fixture
def readme(tmp_path, monkeypatch):
    """A README with an empty tier table; nothing in the environment forces a whole-table run."""
    for switch in ("NENYAX_TIERS", "NENYAX_UPDATE_TIERS", "NENYAX_TIERS_SAMPLE"):
        monkeypatch.delenv(switch, raising=False)
    path = tmp_path / "README.md"
    path.write_text("<!-- tiers:start -->\n<!-- tiers:end -->\n")
    return path


def plan(readme: Path) -> TablePlan:
    return TablePlan.make(readme, every=ROWS, inputs=[], distributions=[])


def test_the_scoring_path_holds_what_decides_a_score():
    files = {file.resolve() for file in tables.scoring_path()}
    # Answer extraction, the question session and its base, the step loop's judgment, the return judge.
    for decider in (extract_answer, QuestionSession, Session, run_step_episode, ReturnJudge):
        assert source_file(decider) in files, decider


def test_a_table_with_no_inputs_of_its_own_still_depends_on_the_scoring_path(readme):
    assert plan(readme).fingerprint == tables.inputs_fingerprint(tables.scoring_path(), [])
    assert plan(readme).fingerprint != tables.inputs_fingerprint([], [])


def test_the_fingerprint_depends_on_the_files_not_where_they_lie(tmp_path):
    installed = tables.scoring_path()
    # The same files elsewhere, each in a folder that sorts them in the reverse order of their names.
    copied = []
    for i, file in enumerate(installed):
        copy = tmp_path / f"{len(installed) - i:02d}" / file.name
        copy.parent.mkdir()
        shutil.copy(file, copy)
        copied.append(copy)
    assert tables.inputs_fingerprint(copied, ["attrs"]) == tables.inputs_fingerprint(installed, ["attrs"])


@pytest.mark.parametrize("module", tables.SCORING_PATH)
def test_a_change_on_the_scoring_path_re_measures_the_whole_table(copies, readme, module):
    tables.record_fingerprint(readme, "tiers", plan(readme).fingerprint)
    unchanged = plan(readme)
    assert not unchanged.full, unchanged.reason  # recorded and unchanged: anchors and a sample only
    assert len(unchanged.names) < len(ROWS)
    changed_file = copies[tables.SCORING_PATH.index(module)]
    changed_file.write_text(changed_file.read_text() + "\n# one line more\n")
    changed = plan(readme)
    assert changed.full
    assert changed.names == tuple(ROWS)
    assert "its inputs changed" in changed.reason
    assert changed.fingerprint != unchanged.fingerprint


def test_two_inputs_of_one_name_are_refused(tmp_path):
    first, second = tmp_path / "a" / "answers.py", tmp_path / "b" / "answers.py"
    for file in (first, second):
        file.parent.mkdir()
        file.write_text("x = 1\n")
    with pytest.raises(RuntimeError, match=r"named answers\.py"):
        tables.inputs_fingerprint([first, second], [])
