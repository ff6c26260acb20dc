"""The authoring toolkit (`nenyax.core.toolkit`): the helpers plugins share instead of copying."""

from __future__ import annotations

import asyncio
import io
import os
import subprocess
import sys
import tarfile
import threading
from pathlib import Path

import pytest

from nenyax.core.contract.uri import parse_uri
from nenyax.core.errors import BadURIError, PolicyFailure, UsageError
from nenyax.core.toolkit import codec, imports, options, sandbox, suggest
from nenyax.core.toolkit.loops import LoopThread, run_sync


async def _loop_id() -> int:
    await asyncio.sleep(0)
    return id(asyncio.get_running_loop())


def test_run_sync_works_inside_a_running_loop():
    async def inside() -> int:
        return run_sync(_answer())

    async def _answer() -> int:
        return 42

    assert run_sync(_answer()) == 42
    assert asyncio.run(inside()) == 42  # as in a Jupyter cell: no deadlock, no "loop already running"


def test_a_loop_thread_runs_every_call_on_one_loop_and_stops():
    runner = LoopThread("nenyax-test-loop")
    first, second = runner.run(_loop_id()), runner.run(_loop_id())
    assert first == second
    assert "nenyax-test-loop" in {t.name for t in threading.enumerate()}
    cleaned = []

    async def cleanup() -> None:
        cleaned.append(True)

    runner.close(cleanup())
    assert cleaned == [True]
    assert "nenyax-test-loop" not in {t.name for t in threading.enumerate()}
    runner.close()  # twice is safe


def test_a_loop_thread_stops_even_when_its_cleanup_raises():
    runner = LoopThread("nenyax-test-raising")
    runner.run(_loop_id())

    async def broken() -> None:
        raise OSError("gone")

    with pytest.raises(OSError, match="gone"):
        runner.close(broken())
    assert "nenyax-test-raising" not in {t.name for t in threading.enumerate()}


def test_did_you_mean_without_a_noun_names_only_a_close_match():
    assert suggest.did_you_mean("rowz", ["rows", "dataset"]) == " Did you mean 'rows'?"
    assert suggest.did_you_mean("zzzz", ["rows", "dataset"]) == ""
    assert suggest.did_you_mean("zzzz", ["rows"], "option") == " Known options: rows."


@pytest.mark.parametrize(
    ("reply", "objects", "expected"),
    [
        ("I go left. <action>1</action> no, <ACTION>```json\n2\n```</ACTION>", False, (["2"], True)),
        ("thinking\n3", False, (["thinking\n3", "3"], False)),
        ('the move {"x": 1}\nok', True, (['the move {"x": 1}\nok', '{"x": 1}', "ok"], False)),
        ('the move {"x": 1}\nok', False, (['the move {"x": 1}\nok', "ok"], False)),
    ],
)
def test_the_codec_finds_where_a_reply_wrote_its_action(reply, objects, expected):
    assert codec.candidates(reply, objects=objects) == expected


def test_the_codec_quotes_a_reply_on_one_clipped_line_and_refuses_what_is_not_text():
    assert codec.clip("a\n  b") == "'a b'"
    assert codec.clip("x" * 100) == repr("x" * 57 + "...")
    with pytest.raises(PolicyFailure, match="Expected the model's reply as text, got int"):
        codec.reply_text(3)


def test_pack_and_unpack_copy_a_folder_owned_by_root(tmp_path):
    source = tmp_path / "src"
    (source / "inner").mkdir(parents=True)
    (source / "inner" / "a.txt").write_text("hello")
    data = sandbox.pack(source, "copied")
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        members = archive.getmembers()
    assert {m.name for m in members} == {"copied", "copied/inner", "copied/inner/a.txt"}
    assert {(m.uid, m.gid, m.uname) for m in members} == {(0, 0, "root")}
    target = tmp_path / "out" / "here"
    assert sandbox.unpack(data, "copied", target)
    assert (target / "inner" / "a.txt").read_text() == "hello"
    assert not sandbox.unpack(data, "missing", tmp_path / "none")
    assert not (tmp_path / "none").exists()


def test_own_cgroups_reads_v1_and_v2_lines(tmp_path):
    table = tmp_path / "cgroup"
    table.write_text("12:memory:/harness/job\n3:cpu,cpuacct:/c\n0::/unified\n")
    assert sandbox.own_cgroups(table) == {"memory": "/harness/job", "cpu": "/c", "cpuacct": "/c", "": "/unified"}
    assert sandbox.own_cgroups(tmp_path / "absent") == {}


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")
def test_carrying_finds_and_kills_what_holds_the_marker():
    marker = f"NENYAX_TOOLKIT_TEST={os.getpid()}"
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; print('ready', flush=True); time.sleep(60)"],
        env={**os.environ, "NENYAX_TOOLKIT_TEST": str(os.getpid())},
        stdout=subprocess.PIPE,
    )
    try:
        # Until it has exec'd, the child's /proc environ is still the parent's (no marker): wait for it to run.
        assert child.stdout is not None
        assert child.stdout.readline() == b"ready\n"
        assert child.pid in sandbox.carrying(marker.encode())
        sandbox.kill_carrying(marker.encode())
        assert child.wait(timeout=10) == -9
        assert sandbox.carrying(marker.encode()) == []
    finally:
        child.kill()


def _options() -> options.Options:
    return options.Options(
        "acme",
        options.Option("max_turns", int, default=10, minimum=1, help="Actions per episode."),
        options.Option("seed", int, default=0, minimum=0, maximum=2**63 - 1),
        options.Option("timeout", float, default=60.0, positive=True),
        options.Option("mode", str, default="fail", choices=("fail", "noop")),
        options.Option("split", str),
        options.Option("seeded", bool),
        options.Option("extra", dict, default={}),
        prefixes=("judge",),
    )


def test_options_read_every_declared_key_with_its_default_and_what_the_uri_sets():
    read = _options().read(parse_uri("acme:x?max_turns=3&split=2021&timeout=2&judge.tolerance=0.1&seeded=true"))
    assert dict(read) == {
        "max_turns": 3,
        "seed": 0,
        "timeout": 2.0,
        "mode": "fail",
        "split": "2021",  # a number where a name is asked for is its text
        "seeded": True,
        "extra": {},
    }
    assert isinstance(read["timeout"], float)
    assert read.given == {"max_turns", "split", "timeout", "seeded"}
    assert read.prefixed == {"judge": {"tolerance": 0.1}}
    first, second = _options().read(parse_uri("acme:x")), _options().read(parse_uri("acme:x"))
    first["extra"]["k"] = 1
    assert second["extra"] == {}  # a mutable default is never shared between reads


@pytest.mark.parametrize(
    ("query", "sentence"),
    [
        ("max_turn=3", "The acme adapter has no option 'max_turn'. Did you mean 'max_turns'?"),
        ("max_turns=0", "max_turns in 'acme:x?max_turns=0' must be an integer of at least 1, got 0."),
        ("max_turns=true", "max_turns in 'acme:x?max_turns=true' must be an integer of at least 1, got True."),
        ("seed=-1", "seed in 'acme:x?seed=-1' must be an integer from 0 to 9223372036854775807, got -1."),
        ("timeout=0", "timeout in 'acme:x?timeout=0' must be a positive number, got 0."),
        ("timeout=inf", "timeout in 'acme:x?timeout=inf' must be a positive number, got inf."),
        (f"timeout={10**400}", f"timeout in 'acme:x?timeout={10**400}' must be a positive number, got {10**400}."),
        ("mode=guess", "mode in 'acme:x?mode=guess' must be one of fail, noop, got 'guess'."),
        ("split=", "split in 'acme:x?split=' must be a non-empty text, got ''."),
        ("seeded=3", "seeded in 'acme:x?seeded=3' must be true or false, got 3."),
        ("extra=[1]", "extra in 'acme:x?extra=[1]' must be a JSON object, got [1]."),
    ],
)
def test_a_bad_option_is_one_sentence(query, sentence):
    with pytest.raises(BadURIError) as caught:
        _options().read(parse_uri(f"acme:x?{query}"))
    assert str(caught.value) == sentence


def test_options_keep_undeclared_keys_when_asked_and_take_defaults_from_a_config():
    read = _options().read(parse_uri("acme:x?difficulty=3"), rest=True, defaults={"max_turns": 7})
    assert read.rest == {"difficulty": 3}
    assert read["max_turns"] == 7
    assert _options().read(parse_uri("acme:x?max_turns=2"), defaults={"max_turns": 7})["max_turns"] == 2


def test_options_explain_themselves_and_refuse_a_bad_declaration():
    help_text = _options().help()
    assert "max_turns (an integer of at least 1; default 10): Actions per episode." in help_text
    assert "judge.<key>: passed on as <key>" in help_text
    with pytest.raises(TypeError, match="use one of int, float"):
        options.Option("when", tuple)


def test_a_factory_s_settings_are_checked_with_the_same_table():
    table = options.Options(
        "tinker",
        options.Option("loss", str, choices=("ppo", "gspo")),
        options.Option("rank", int, positive=True),
        kind="learner",
        error=UsageError,
    )
    assert dict(table.check(loss="ppo", rank=8)) == {"loss": "ppo", "rank": 8}
    with pytest.raises(UsageError) as caught:
        table.check(loss="grpo")
    assert str(caught.value) == "The tinker learner's loss must be one of ppo, gspo, got 'grpo'. Did you mean 'gspo'?"
    assert not isinstance(caught.value, BadURIError)
    with pytest.raises(UsageError, match=r"The tinker learner has no option 'rnak'\. Did you mean 'rank'"):
        table.check(rnak=8)


def _import_error(tmp_path, monkeypatch, module: str, files: dict[str, str]) -> ImportError:
    """The real ImportError of importing `module` from packages written under tmp_path."""
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m.split(".")[0].startswith("nxprobe")]:
        monkeypatch.delitem(sys.modules, name)
    with pytest.raises(ImportError) as raised:
        __import__(module)
    return raised.value


def test_only_a_package_not_installed_counts_as_absent(tmp_path, monkeypatch):
    gone = _import_error(tmp_path, monkeypatch, "nxprobe_gone.agents", {})
    assert imports.absent(gone, "nxprobe_gone")
    # Installed, but a dependency is too old (a name it needs is not there): broken, not absent.
    old_dependency = {"nxprobe_dep/__init__.py": "", "nxprobe_pkg/__init__.py": "from nxprobe_dep import NEEDED\n"}
    broken = _import_error(tmp_path, monkeypatch, "nxprobe_pkg", old_dependency)
    assert not imports.absent(broken, "nxprobe_pkg")
    # Installed, but a dependency is missing, or a module of another version's layout: not absent either.
    missing_dependency = {"nxprobe_two/__init__.py": "import nxprobe_nowhere\n"}
    assert not imports.absent(_import_error(tmp_path, monkeypatch, "nxprobe_two", missing_dependency), "nxprobe_two")
    layout = {"nxprobe_three/__init__.py": ""}
    assert not imports.absent(_import_error(tmp_path, monkeypatch, "nxprobe_three.moved", layout), "nxprobe_three")
    # A dotted name: a missing package above it is absence; a broken one is not.
    assert imports.module_absent(gone, "nxprobe_gone.agents.terminus")
    assert not imports.module_absent(broken, "nxprobe_pkg.tasks")


def test_a_broken_import_is_one_sentence_naming_the_import_and_why(tmp_path, monkeypatch):
    files = {"nxprobe_dep/__init__.py": "", "nxprobe_pkg/__init__.py": "from nxprobe_dep import NEEDED\n"}
    error = imports.broken_import("nxprobe_pkg", _import_error(tmp_path, monkeypatch, "nxprobe_pkg", files), "pin it")
    text = str(error)
    assert isinstance(error, UsageError)
    assert text.startswith("Importing nxprobe_pkg failed although it is installed (ImportError: ")
    assert "NEEDED" in text
    assert "nxprobe_dep" in text
    assert text.endswith("; pin it.")
    assert "\n" not in text
