"""What nenyax-core publishes: the conformance kit, and none of this distribution's helpers (issue 38, part 2).

The wheel is built here from the checkout by hatchling, the backend every distribution builds with, so the
test reads what `pip install nenyax-core` would install, not the source tree.
"""

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

import nenyax_testsupport

PACKAGES = Path(__file__).resolve().parents[2]
CORE = PACKAGES / "nenyax-core"
HELPERS = sorted(p.stem for p in Path(nenyax_testsupport.__file__).parent.glob("*.py") if p.stem != "__init__")
# The kit: what plugin authors import, subclass and run, and what it loads at run time (the tracer kit's
# loopback collector; the provider kit's documented scripted server).
KIT = [
    "nenyax/testing/__init__.py",
    "nenyax/testing/report.py",
    "nenyax/testing/subject.py",
    "nenyax/testing/collector.py",
    "nenyax/testing/model_server.py",
    "nenyax/testing/checks/__init__.py",
    "nenyax/testing/checks/common.py",
    "nenyax/testing/suites/adapter.py",
    "nenyax/testing/suites/isolation.py",
]


@pytest.fixture(scope="module")
def core_wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    build = [sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", str(out)]
    subprocess.run(build, cwd=CORE, check=True, capture_output=True, timeout=120)
    (wheel,) = out.glob("nenyax_core-*.whl")
    return zipfile.ZipFile(wheel).namelist()


def test_the_helpers_are_here():
    assert {"fakes", "tables", "terminal", "signals", "cli", "distributions"} <= set(HELPERS)


def test_the_core_wheel_ships_no_repository_helper(core_wheel):
    shipped = {Path(name).stem for name in core_wheel if name.startswith("nenyax/testing/")}
    assert sorted(shipped & set(HELPERS)) == []
    assert [name for name in core_wheel if name.startswith("nenyax_testsupport/")] == []


def test_the_core_wheel_ships_the_kit(core_wheel):
    assert [name for name in KIT if name not in core_wheel] == []


def test_core_never_names_the_support_package():
    # A factory string or an import of it would work in this checkout and break every installed wheel.
    naming = [p.relative_to(CORE) for p in (CORE / "src").rglob("*.py") if "nenyax_testsupport" in p.read_text()]
    assert naming == []


def test_this_distribution_is_never_published():
    config = tomllib.loads((PACKAGES / "nenyax-testsupport" / "pyproject.toml").read_text())
    assert "Private :: Do Not Upload" in config["project"]["classifiers"]
