"""Each kind's scaffold (`nenyax new-plugin KIND acme`), installed, used by name as a user would.

Run by `nox -s plugin-kits` only (one test per kind, each after its scaffold is installed): `acme` is the
scaffold of the kind under test, `acme_env:reverse` an environment from another (adapter) scaffold.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from nenyax.core.kinds import KINDS


def nenyax(*args: str) -> Any:
    """Run the session's `nenyax` CLI; its parsed JSON with `--json`, else its output."""
    done = subprocess.run([str(Path(sys.executable).with_name("nenyax")), *args], capture_output=True, text=True)
    assert done.returncode == 0, f"nenyax {' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}"
    return json.loads(done.stdout) if "--json" in args else done.stdout


def test_every_kind_is_used_by_name() -> None:
    """A new kind must be used by name here too (the session runs one test per kind, named after it)."""
    assert sorted(KINDS) == sorted(name.removeprefix("test_use_") for name in globals() if name.startswith("test_use_"))


def test_use_adapter() -> None:
    check = nenyax("check", "acme:reverse", "--json", "--require", "audited")
    assert check["tier"] == "audited", check["tier"]


def test_use_provider() -> None:
    played = nenyax("try", "acme_env:reverse", "--model", "acme:echo", "--json")
    assert played["status"] == "ok", played["status"]
    assert played["policy"]["provider"] == "acme", played["policy"]
    assert played["model_calls"][0]["response"]["content"].startswith("Spell the word"), played["model_calls"][0]
    check = nenyax("check", "acme_env:reverse", "--model", "acme:echo", "--json", "--samples", "2")
    assert [r["outcome"] for r in check["model_results"]] == ["passed"], check["model_results"]


def test_use_judge() -> None:
    from nenyax.core import default_registry
    from nenyax.core.plugins.interfaces import create

    judge = create(default_registry(), "judge", "acme", needs=("answer",))
    assert judge.judge(" Paris", "paris").passed
    assert not judge.judge("Lyon", "paris").passed


def test_use_sandbox() -> None:
    from nenyax.core import SandboxSpec, create_sandbox

    async def play() -> Any:
        backend = create_sandbox("acme")
        image = await backend.build(SandboxSpec(image="host", workdir="/workspace"))
        async with await backend.start(image) as box:
            return await box.exec("echo hi > note.txt && cat note.txt && pwd", timeout=30)

    done = asyncio.run(play())
    assert done.ok, done
    assert done.stdout.split() == ["hi", "/workspace"], done


def test_use_learner(tmp_path: Path) -> None:
    out = tmp_path / "train"
    nenyax(
        "train",
        "acme_env:reverse",
        "--learner",
        "acme",
        "--rounds",
        "1",
        "--group-size",
        "2",
        "--tasks-per-round",
        "2",
        "--heldout",
        "2",
        "--out",
        str(out),
        "--quiet",
    )
    assert (out / "checkpoints").is_dir()
    assert any((out / "checkpoints").rglob("memory.json"))


def test_use_exporter(tmp_path: Path) -> None:
    nenyax(
        "eval", "acme_env:reverse", "--policy", "reference", "--tasks", "3", "--out", str(tmp_path / "run"), "--json"
    )
    raw = tmp_path / "raw.json"
    nenyax("export", str(tmp_path / "run"), "--to", "acme", "--rows", "raw", "--out", str(raw), "--json")
    assert len(json.loads(raw.read_text())) == 3


def test_use_tracer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from nenyax.testing.collector import Collector

    with Collector() as collector:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.url)
        nenyax(
            "eval",
            "acme_env:reverse",
            "--policy",
            "reference",
            "--tasks",
            "2",
            "--trace",
            "acme",
            "--out",
            str(tmp_path / "traced"),
            "--json",
        )
        assert collector.holds("invoke_agent"), [r.path for r in collector.requests]
