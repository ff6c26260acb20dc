"""The monorepo's shape: PEP 420 namespaces, one hatchling distribution per package, wheels that stand alone."""

import importlib.metadata
import importlib.util
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The products: not a distribution classified "Private :: Do Not Upload" (nenyax-testsupport, the helpers only
# this repository's tests use, with a top-level import package of its own), which is never published.
PACKAGES = sorted(
    p.parent
    for p in ROOT.glob("packages/*/pyproject.toml")
    if "Private :: Do Not Upload" not in tomllib.loads(p.read_text())["project"].get("classifiers", [])
)


def leaves_of(package: Path) -> set[str]:
    """The leaf packages a distribution's name promises, as paths under ``nenyax/``: ``nenyax-<area>-<name>``
    ships ``nenyax/<area>/<name>`` inside the namespace area, ``nenyax-<name>`` ships ``nenyax/<name>``
    (core, cli, ray); nenyax-core also ships the conformance kit, ``nenyax/testing``."""
    words = package.name.removeprefix("nenyax-").split("-", 1)
    leaf = f"{words[0]}/{words[1].replace('-', '_')}" if len(words) == 2 else words[0]
    return {leaf, "testing"} if package.name == "nenyax-core" else {leaf}


# The namespace folders between ``nenyax/`` and a leaf (adapters, learners, server, ...): PEP 420, no __init__.
AREAS = sorted({leaf.split("/")[0] for package in PACKAGES for leaf in leaves_of(package) if "/" in leaf})


def test_every_package_folder_is_an_installed_distribution_of_its_name():
    names = {tomllib.loads((p / "pyproject.toml").read_text())["project"]["name"]: p for p in PACKAGES}
    assert sorted(names) == [p.name for p in PACKAGES]  # each folder is named after its distribution
    installed = {d.metadata["Name"] for d in importlib.metadata.distributions()}
    every = [tomllib.loads(p.read_text())["project"]["name"] for p in ROOT.glob("packages/*/pyproject.toml")]
    assert sorted(n for n in installed if n.startswith("nenyax-")) == sorted(every)  # the private ones too
    for name, package in names.items():
        for leaf in leaves_of(package):
            spec = importlib.util.find_spec("nenyax." + leaf.replace("/", "."))
            assert spec is not None, (name, leaf)
            assert spec.origin is not None, (name, leaf)
            # Imported from this checkout's folder of that distribution, not from some other copy.
            assert Path(spec.origin).resolve().is_relative_to(package / "src" / "nenyax" / leaf), (name, spec.origin)


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_namespace_folders_hold_no_init(package):
    namespace = package / "src" / "nenyax"
    assert not (namespace / "__init__.py").exists()
    assert [p.name for p in namespace.iterdir() if p.is_file()] == []
    # Only the folders the distribution's name promises, and each area among them a namespace.
    assert sorted(p.name for p in namespace.iterdir()) == sorted({leaf.split("/")[0] for leaf in leaves_of(package)})
    for area in AREAS:
        if (namespace / area).exists():
            assert not (namespace / area / "__init__.py").exists(), area
            assert [p.name for p in (namespace / area).iterdir() if p.is_file()] == [], area


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_distribution_shape(package):
    config = tomllib.loads((package / "pyproject.toml").read_text())
    assert config["build-system"]["build-backend"] == "hatchling.build"
    assert config["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == ["src/nenyax"]
    for requirement in config["project"].get("dependencies", []):
        if requirement.startswith("nenyax-"):
            assert "==" not in requirement, requirement
            assert "<" in requirement, requirement
    src = package / "src" / "nenyax"
    leaves = [p.parent for p in src.rglob("__init__.py")]
    tops = {p for p in leaves if not (p.parent / "__init__.py").exists()}
    assert {top.relative_to(src).as_posix() for top in tops} == leaves_of(package)
    assert all((leaf / "py.typed").exists() for leaf in tops)


_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def _broken_links(readme):
    targets = [t for t in _LINK.findall(readme.read_text()) if not re.match(r"^[a-z]+:", t)]
    return [t for t in targets if not (readme.parent / t).exists()]


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_readme_says_what_it_is_and_how_to_install_it(package):
    readme = package / "README.md"
    lines = readme.read_text().splitlines()
    assert lines[0] == f"# {package.name}"
    prose = [line for line in lines[1:] if line.strip() and not line.startswith(("#", "|", "`", "<!--", "-"))]
    assert len(prose) >= 3, f"{readme} says little more than its title."
    assert re.search(rf"pip install\b.*\b{re.escape(package.name)}\b", readme.read_text()), "no install command"
    assert _broken_links(readme) == []


def test_the_root_readme_lists_every_distribution_and_its_links_resolve():
    readme = ROOT / "README.md"
    assert [p.name for p in PACKAGES if f"`packages/{p.name}`" not in readme.read_text()] == []
    assert _broken_links(readme) == []


def test_the_cli_readme_documents_every_command():
    from nenyax.cli.main import COMMANDS

    text = (ROOT / "packages/nenyax-cli/README.md").read_text()
    assert [name for name in COMMANDS if f"nenyax {name}" not in text] == []


def test_the_core_readme_names_every_plugin_kind_and_its_interface():
    from nenyax.core.kinds import KINDS

    text = (ROOT / "packages/nenyax-core/README.md").read_text()
    missing = [k.name for k in KINDS.values() if f"`{k.name}`" not in text or k.interface.split(":")[0] not in text]
    assert missing == []


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
