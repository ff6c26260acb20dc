"""`nenyax new-plugin KIND NAME [--dir DIR]`: the distribution it writes, file by file, and the inputs it refuses.

Golden files: ``tests/golden/new_plugin/<kind>/`` holds what ``nenyax new-plugin <kind> acme`` writes (the
contents of ``nenyax-acme/``), compared file by file. After changing a template on purpose, regenerate them
and read the diff before committing it:

    NENYAX_REGENERATE_GOLDEN=1 pytest packages/nenyax-cli/tests/test_new_plugin.py -k golden
    git diff packages/nenyax-cli/tests/golden/

With ``CI`` set the switch is refused (the test fails): CI checks the golden files, never rewrites them.

That the written plugins install, pass their own tests and ``nenyax <kind>-check acme --strict`` is proven
end to end for every kind by ``nox -s plugin-kits``; here the kinds that need nothing beyond nenyax-core are
loaded in-process (an in-memory registry over the generated plugin module) and pass their kit.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from nenyax.cli.main import cli
from nenyax.cli.scaffold import render
from nenyax.core.kinds import KINDS
from nenyax.core.plugins.registry import Registry
from nenyax.testing import CHECKS, Report, Subject, Verdict, common_checks

GOLDEN = Path(__file__).parent / "golden" / "new_plugin"


def regenerating() -> bool:
    """True when the golden files are being rewritten; never on CI, where they are checked, not written.

    The same rule as the tier tables' switch (`nenyax_testsupport.tables.updating`): a CI run with the switch set
    would rewrite every expectation from what the scaffold writes now and pass whatever it writes.
    """
    if os.environ.get("NENYAX_REGENERATE_GOLDEN", "") in ("", "0"):
        return False
    if os.environ.get("CI"):
        msg = "NENYAX_REGENERATE_GOLDEN is set on CI: CI checks the golden files and never rewrites them."
        raise RuntimeError(msg)
    return True


def new_plugin(*args: str):
    """`nenyax new-plugin ...` in this process (the golden tests run it seven times)."""
    return CliRunner().invoke(cli, ["new-plugin", *args], catch_exceptions=False)


def nenyax(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`nenyax ...` in a subprocess: the exit code and the error lines as a user sees them."""
    return subprocess.run(
        [sys.executable, "-m", "nenyax.cli", *args], capture_output=True, text=True, timeout=120, check=False, cwd=cwd
    )


CACHES = {"__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache"}
"""What tools leave in a folder (a golden one too, when they ran there): never written by the scaffold."""


def files_under(folder: Path) -> dict[str, str]:
    files = (p for p in sorted(folder.rglob("*")) if p.is_file() and not CACHES & set(p.relative_to(folder).parts))
    return {str(p.relative_to(folder)): p.read_text(encoding="utf-8") for p in files}


@pytest.mark.parametrize("kind", list(KINDS))
def test_each_kind_writes_its_golden_files(kind, tmp_path):
    done = new_plugin(kind, "acme", "--dir", str(tmp_path))
    assert done.exit_code == 0, done.output
    written = files_under(tmp_path / "nenyax-acme")
    if regenerating():
        shutil.rmtree(GOLDEN / kind, ignore_errors=True)
        shutil.copytree(tmp_path / "nenyax-acme", GOLDEN / kind, ignore=shutil.ignore_patterns(*CACHES))
    expected = files_under(GOLDEN / kind)
    assert sorted(written) == sorted(expected)
    for path, text in expected.items():
        assert written[path] == text, f"{kind}: {path} differs from its golden file (see this module's docstring)"


def test_ci_refuses_to_regenerate_the_golden_files():
    # The golden test of one kind, run as CI runs it but with the switch set: it fails and rewrites nothing.
    before = files_under(GOLDEN / "adapter")
    env = {**os.environ, "CI": "1", "NENYAX_REGENERATE_GOLDEN": "1"}
    one_kind = ["-k", "writes_its_golden and adapter"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__, *one_kind],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=Path(__file__).parents[1],
        env=env,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed" in done.stdout, done.stdout
    assert "NENYAX_REGENERATE_GOLDEN is set on CI" in done.stdout, done.stdout
    assert files_under(GOLDEN / "adapter") == before


def test_the_layout_has_its_own_top_level_package_and_an_entry_point_named_after_the_distribution(tmp_path):
    done = new_plugin("provider", "acme-cloud", "--dir", str(tmp_path), "--json")
    assert done.exit_code == 0, done.output
    root = tmp_path / "nenyax-acme-cloud"
    assert (root / "src" / "nenyax_acme_cloud" / "plugin.py").is_file()
    assert not (root / "src" / "nenyax").exists()  # never inside the nenyax namespace
    pyproject = (root / "pyproject.toml").read_text()
    assert 'name = "nenyax-acme-cloud"' in pyproject
    assert 'acme-cloud = "nenyax_acme_cloud.plugin"' in pyproject
    assert 'packages = ["src/nenyax_acme_cloud"]' in pyproject
    ci = (root / ".github" / "workflows" / "ci.yml").read_text().splitlines()
    assert ci[-1] == "      - run: nenyax provider-check acme-cloud --strict"


def test_an_empty_folder_is_written_into(tmp_path):
    (tmp_path / "nenyax-acme").mkdir()
    done = new_plugin("judge", "acme", "--dir", str(tmp_path))
    assert done.exit_code == 0, done.output
    assert (tmp_path / "nenyax-acme" / "src" / "nenyax_acme" / "judge.py").is_file()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["adaptor", "acme"], "Error: There is no plugin kind 'adaptor'. Did you mean 'adapter'?"),
        (["widget", "acme"], "Error: There is no plugin kind 'widget'. Known plugin kinds: adapter, exporter, judge"),
        (["judge", "Acme"], "Error: 'Acme' cannot name a plugin: use lower-case letters and digits"),
        (["judge", "2acme"], "Error: '2acme' cannot name a plugin"),
        (["judge", "acme--x"], "Error: 'acme--x' cannot name a plugin"),
        (["judge", "acme x"], "Error: 'acme x' cannot name a plugin"),
        (["adapter", "acme-env"], "Error: An adapter's name is its URI scheme, which takes '_' but never '-': name it"),
    ],
)
def test_a_bad_kind_or_name_is_one_sentence_and_exit_2(tmp_path, args, said):
    done = nenyax("new-plugin", *args, "--dir", str(tmp_path))
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stderr.startswith(said)
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_an_existing_folder_is_never_overwritten(tmp_path):
    (tmp_path / "nenyax-acme").mkdir()
    (tmp_path / "nenyax-acme" / "mine.txt").write_text("keep me")
    done = nenyax("new-plugin", "judge", "acme", "--dir", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"Error: {tmp_path / 'nenyax-acme'} already exists and is not an empty folder; remove it or choose another --dir."
    )
    assert [p.name for p in (tmp_path / "nenyax-acme").iterdir()] == ["mine.txt"]


def test_a_dir_that_is_a_file_is_one_sentence(tmp_path):
    (tmp_path / "a-file").write_text("")
    done = nenyax("new-plugin", "judge", "acme", "--dir", str(tmp_path / "a-file" / "deeper"), "--json")
    assert done.returncode == 2
    assert "is a file, not a folder" in done.stderr
    assert "Traceback" not in done.stderr


# The kinds whose template needs nothing nenyax-cli's tests lack (the sandbox needs bwrap, the tracer the
# OpenTelemetry SDK): each is loaded from its folder and must pass its kind's whole kit here.
IN_PROCESS = ["adapter", "provider", "judge", "learner", "exporter"]


@pytest.mark.parametrize("kind", IN_PROCESS)
def test_the_written_plugin_passes_its_kit_in_process(kind, tmp_path, monkeypatch):
    name = f"acme_{kind}"
    assert new_plugin(kind, name, "--dir", str(tmp_path)).exit_code == 0
    src = tmp_path / f"nenyax-{name}" / "src"
    package = f"nenyax_{name}"
    monkeypatch.syspath_prepend(str(src))
    # A fresh interpreter replays the adapter's episodes (trainable/fresh-process): it must find the plugin too.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(src), os.environ.get("PYTHONPATH")])))
    try:
        module = importlib.import_module(f"{package}.plugin")
        registry = Registry.from_plugins((name, module))
        report = Report.of(CHECKS[kind], Subject.from_registry(kind, name, registry))
    finally:
        for loaded in [m for m in sys.modules if m == package or m.startswith(f"{package}.")]:
            del sys.modules[loaded]
    failed = {o.check.id: ([f.message for f in o.findings], o.reason) for o in report.failed(strict=True)}
    assert failed == {}
    own = {c.id for c in CHECKS[kind]} - {c.id for c in common_checks(kind)}
    passed = {o.check.id for o in report.outcomes if o.verdict is Verdict.PASSED}
    assert f"{kind}/registration-is-lazy" in passed
    assert f"{kind}/factory-returns-{kind}" in passed
    assert len(own & passed) >= 3  # the kit's own checks ran on it, not only the common ones


def test_every_template_renders_for_every_kind():
    for kind in KINDS:
        files = render(kind, "acme")
        assert "src/nenyax_acme/plugin.py" in files
        assert f'kind="{kind}"' in files["src/nenyax_acme/plugin.py"]
        assert "$" not in files["src/nenyax_acme/plugin.py"]
