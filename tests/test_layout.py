"""The monorepo's shape: PEP 420 namespaces, one hatchling distribution per package, wheels that stand alone."""

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = sorted(p.parent for p in ROOT.glob("packages/*/pyproject.toml"))
AREAS = ("adapters", "learners", "providers", "sandboxes", "judges", "exporters", "tracers", "server")


def test_there_are_packages():
    assert {p.name for p in PACKAGES} >= {"nenyax-core", "nenyax-cli", "nenyax-adapters-reasoning-gym"}


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_namespace_folders_hold_no_init(package):
    namespace = package / "src" / "nenyax"
    assert not (namespace / "__init__.py").exists()
    assert [p.name for p in namespace.iterdir() if p.is_file()] == []
    for area in AREAS:
        assert not (namespace / area / "__init__.py").exists()


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_distribution_shape(package):
    config = tomllib.loads((package / "pyproject.toml").read_text())
    assert config["build-system"]["build-backend"] == "hatchling.build"
    assert config["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == ["src/nenyax"]
    for requirement in config["project"].get("dependencies", []):
        if requirement.startswith("nenyax-"):
            assert "==" not in requirement and "<" in requirement, requirement
    leaves = [p.parent for p in (package / "src" / "nenyax").rglob("__init__.py")]
    tops = {p for p in leaves if not (p.parent / "__init__.py").exists()}
    assert tops and all((leaf / "py.typed").exists() for leaf in tops)
    assert (package / "README.md").read_text().strip()


def test_wheels_carry_no_namespace_init(tmp_path):
    for package in PACKAGES:
        subprocess.run(
            [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp_path), str(package)],
            check=True,
            capture_output=True,
        )
    wheels = sorted(tmp_path.glob("*.whl"))
    assert len(wheels) == len(PACKAGES)
    for wheel in wheels:
        names = zipfile.ZipFile(wheel).namelist()
        assert "nenyax/__init__.py" not in names
        assert not any(n.startswith(tuple(f"nenyax/{a}/__init__.py" for a in AREAS)) for n in names)
        assert any(n.endswith("py.typed") for n in names), wheel.name
