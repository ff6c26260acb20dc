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
    configs = [tomllib.loads(p.read_text()) for p in ROOT.glob("packages/*/pyproject.toml")]
    # `integration` leaves out what says `integration = false` (its pins cannot meet the shared test groups').
    apart = {c["project"]["name"] for c in configs if not c["tool"].get("nenyax", {}).get("integration", True)}
    every = [c["project"]["name"] for c in configs if c["project"]["name"] not in apart]
    assert sorted(n for n in installed if n.startswith("nenyax-")) == sorted(every)  # the private ones too
    for name, package in names.items():
        if name in apart:
            continue
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
    wheel = config["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]
    # Beside `nenyax`, only a loader shim a format's own lookup needs: verifiers imports a taskset id as one
    # top-level module (nenyax-trainers-verifiers' `nenyax_verifiers`).
    assert wheel[0] == "src/nenyax"
    assert all(extra.startswith("src/nenyax_") and (package / extra).is_dir() for extra in wheel[1:]), wheel
    for requirement in config["project"].get("dependencies", []):
        if requirement.startswith("nenyax-"):
            assert "==" not in requirement, requirement
            assert "<" in requirement, requirement
    src = package / "src" / "nenyax"
    # Example projects shipped as data hold packages of their own (a karotte environment's `environment`).
    leaves = [p.parent for p in src.rglob("__init__.py") if "examples" not in p.relative_to(src).parts]
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


ADAPTER_FOLDERS = sorted(p.parent for p in ROOT.glob("packages/nenyax-adapters-*/src/nenyax/adapters/*/adapter.py"))
SCAFFOLDED_ADAPTER = ROOT / "packages/nenyax-cli/tests/golden/new_plugin/adapter/src/nenyax_acme"
"""What `nenyax new-plugin adapter acme` writes: it teaches the same layout."""
ADAPTER_ROLES = ("options", "environment", "session", "codec", "wire", "reference", "judgment")
"""One file name per role (URI options, environment, session, codec, wire, reference, judgment): see
packages/nenyax-core/README.md and what `nenyax new-plugin adapter` writes."""
OTHER_NAMES_OF_A_ROLE = {
    "spec": "options",
    "uri": "options",
    "answers": "reference",
    "gold": "reference",
    "planner": "reference",
    "judge": "judgment",
    "protocol": "wire",
}
TOOLKIT_HELPERS = {
    "def run_sync": "nenyax.core.toolkit.loops.run_sync",
    "def run_blocking": "nenyax.core.toolkit.loops.run_sync",
    "asyncio.new_event_loop": "nenyax.core.toolkit.loops.LoopThread",
    "get_close_matches": "nenyax.core.toolkit.suggest.did_you_mean",
    "def _clip(text: str": "nenyax.core.toolkit.codec.clip",
    "<action>(.*?)</action>": "nenyax.core.toolkit.codec.candidates",
    "def _as_root": "nenyax.core.toolkit.sandbox.pack",
    "/proc/self/cgroup": "nenyax.core.toolkit.sandbox.own_cgroups",
    "[0-9]*/environ": "nenyax.core.toolkit.sandbox.carrying",
}
"""Text that shows a plugin writing again a helper of the authoring toolkit, and the helper to use."""


def test_there_are_ten_adapters_to_hold_to_one_layout():
    assert len(ADAPTER_FOLDERS) >= 10


@pytest.mark.parametrize("folder", [*ADAPTER_FOLDERS, SCAFFOLDED_ADAPTER], ids=lambda p: p.name)
def test_every_adapter_follows_the_one_layout(folder):
    names = {p.stem for p in folder.glob("*.py")}
    assert {"adapter", "plugin"} <= names
    renamed = {name: OTHER_NAMES_OF_A_ROLE[name] for name in names if name in OTHER_NAMES_OF_A_ROLE}
    assert renamed == {}, f"{folder.name}: these files hold a role that has one name: {renamed}"
    reading_options = sorted(
        p.name for p in folder.glob("*.py") if re.search(r"\buri\.params\b|\bOptions\(", p.read_text())
    )
    assert reading_options in ([], ["options.py"]), f"{folder.name} reads URI options outside options.py"
    if "options" in names:
        text = (folder / "options.py").read_text()
        assert "from nenyax.core.toolkit.options import" in text, f"{folder.name}/options.py declares no Options"
        assert "OPTIONS = Options(" in text


@pytest.mark.parametrize(
    "package", [p for p in PACKAGES if p.name not in ("nenyax-core", "nenyax-cli")], ids=lambda p: p.name
)
def test_plugins_use_the_toolkit_instead_of_copying_it(package):
    copies = [
        f"{source.relative_to(package)} has {needle!r}: use {helper}"
        for source in sorted((package / "src").rglob("*.py"))
        for needle, helper in TOOLKIT_HELPERS.items()
        if needle in source.read_text()
    ]
    assert copies == []
