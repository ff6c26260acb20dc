"""Where episodes run: the in-process asyncio pool and the process pool give the same trajectories, once.

Real worker processes (the ``spawn`` start method) play the in-memory `arith` fake, loaded through a
registry over `nenyax_testsupport.fakes.AdapterPlugin` (core cannot install a real adapter); the policies
that travel are the module-level functions of `nenyax_testsupport.fakes`, because a worker imports a
policy by name and these test modules are not importable by name (pytest's importlib mode).
"""

import json
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from nenyax.core import BadURIError, CannotTravelError, Endpoint, EnvironmentSpec, Registry, Status, UsageError, load
from nenyax.core.contract.events import Observer
from nenyax.core.engine.executors import Job, backend_names, backends, executor_for
from nenyax.core.engine.runner import run_jobs
from nenyax.core.engine.sinks import read_trajectories
from nenyax.core.engine.sync import run_sync
from nenyax.core.engine.travel import policy_ticket
from nenyax.core.errors import WorkerLostError
from nenyax.core.plugins import seams
from nenyax_testsupport import fakes
from nenyax_testsupport.distributions import write_distribution
from nenyax_testsupport.fakes import AdapterPlugin, ArithEnvironment, ScriptedChat

WORKERS = 2


@pytest.fixture
def registry():
    return Registry.from_plugins(("arith", AdapterPlugin()))


def _played(trajectories):
    """What must not depend on where an episode ran (its id and timing do)."""
    return [
        (t.task_id, t.seed, t.sample, t.status, t.judgment, t.policy, t.steps, t.manifest_digest) for t in trajectories
    ]


def _groups(trajectories):
    """The partition into groups, without the group ids themselves (fresh per run)."""
    members = {}
    for t in trajectories:
        members.setdefault(t.group_id, []).append((t.task_id, t.sample))
    return sorted(sorted(m) for m in members.values())


@pytest.mark.parametrize("policy", ["reference", "random", fakes.add_up])
def test_the_process_pool_plays_the_same_trajectories_each_exactly_once(registry, policy, tmp_path):
    env = load("arith:add?size=12", registry=registry)
    here = env.rollouts(policy, n=3, sink=tmp_path / "here.jsonl")
    there = env.rollouts(policy, n=3, sink=tmp_path / "there.jsonl", backend="process", workers=WORKERS)
    assert _played(there) == _played(here)
    assert len(there) == 36
    assert _groups(there) == _groups(here)
    assert {t.status for t in there} == {Status.OK}
    ids = [t.id for t in here + there]
    assert len(set(ids)) == len(ids)  # fresh ids, never one made twice or copied between runs
    on_disk = list(read_trajectories(tmp_path / "there.jsonl"))
    assert sorted(t.id for t in on_disk) == sorted(t.id for t in there)  # each once, written by this process


class Ends(Observer):
    """Every episode start and end the observers see, in order."""

    def __init__(self):
        self.started, self.seen = [], []

    def on_episode_started(self, event):
        self.started.append(event.trajectory_id)

    def on_episode_ended(self, event):
        self.seen.append(event.trajectory)


def test_run_jobs_hands_each_trajectory_once_to_the_observers_and_the_sink(registry, tmp_path):
    env = load("arith:add?size=9", registry=registry)
    jobs = [Job(task, None, 0) for task in env.task_ids()]
    ends = Ends()
    kept = run_sync(
        run_jobs(
            env,
            fakes.add_up,
            jobs,
            sink=tmp_path / "t.jsonl",
            observers=[ends],
            keep=False,
            backend="process",
            workers=WORKERS,
            concurrency=2,
        )
    )
    seen = ends.seen
    assert kept == []
    assert ends.started == [t.id for t in seen]  # each episode started once, before it ended
    assert sorted(t.task_id for t in seen) == sorted(env.task_ids())
    assert [t.id for t in read_trajectories(tmp_path / "t.jsonl")] == [t.id for t in seen]  # sink first, same order
    assert all(t.score == 1.0 for t in seen)


def test_the_load_config_travels_to_the_workers(registry):
    # The URI names no size: 20 tasks exist only with the config, so a worker that dropped it (10 tasks) fails.
    env = load("arith:add", registry=registry, config={"size": 20})
    assert env.source == EnvironmentSpec(uri="arith:add", config={"size": 20}, plugins=env.source.plugins)
    there = env.rollouts("reference", tasks=env.task_ids()[15:], backend="process", workers=1)
    assert [(t.task_id, t.score) for t in there] == [(f"add/0/{i}", 1.0) for i in range(15, 20)]


def test_an_environment_rebuilt_from_its_spec_has_the_same_digest(registry):
    env = load("arith:add", registry=registry, config={"size": 7})
    spec = pickle.loads(pickle.dumps(env.source))
    again = spec.load()
    assert again.digest == env.digest
    assert again.task_ids() == env.task_ids()
    from_json = EnvironmentSpec.from_data(json.loads(json.dumps(env.source.to_data())))
    assert load(from_json).digest == env.digest
    assert load("arith:add", registry=registry).digest != env.digest  # the config is part of what was loaded
    with pytest.raises(UsageError, match="carries its own registry and config"):
        load(spec, config={"size": 1})


def test_installed_plugins_travel_as_none():
    assert EnvironmentSpec(uri="x:y").plugins is None
    assert EnvironmentSpec(uri="x:y", plugins=[["a", "b"]]).plugins == (("a", "b"),)


def _one_sentence(exc_info, *names):
    message = str(exc_info.value)
    assert message.count(". ") == 0, message
    assert message.endswith("."), message
    for name in names:
        assert name in message, message


def test_a_policy_that_cannot_travel_is_one_sentence_before_any_episode(registry, tmp_path):
    env = load("arith:add?size=4", registry=registry)
    secret = 3

    def closure(observation):
        return str(secret)

    sink = tmp_path / "t.jsonl"
    cases = [
        (lambda observation: "0", ("lambda",)),
        (closure, ("closure", "test_executors")),
        (ScriptedChat("4"), ("scripted-chat", "ScriptedChat", "lives in this process")),
    ]
    for policy, names in cases:
        with pytest.raises(CannotTravelError) as caught:
            env.rollouts(policy, sink=sink, backend="process", workers=1)
        _one_sentence(caught, *names, "asyncio")
    assert not sink.exists() or sink.read_bytes() == b""  # refused before anything was played


def test_an_environment_built_directly_cannot_travel():
    env = ArithEnvironment("arith:add?size=3", size=3, seed=0)
    with pytest.raises(CannotTravelError) as caught:
        env.rollouts("reference", backend="process", workers=1)
    _one_sentence(caught, "arith:add?size=3", "load")


def test_what_travels_comes_back_the_same():
    assert policy_ticket("random").build().info.kind == "random"
    assert policy_ticket(fakes.add_up).build().fn is fakes.add_up  # type: ignore[attr-defined]
    endpoint = Endpoint("openai:m", base_url="http://127.0.0.1:9/v1", temperature=0.3)
    rebuilt = pickle.loads(pickle.dumps(policy_ticket(endpoint))).build()
    assert rebuilt.config() == endpoint.config()


def test_the_endpoint_config_names_the_key_variable_never_its_value(monkeypatch):
    monkeypatch.setenv("NENYAX_TEST_KEY", "sk-very-secret-value")
    endpoint = Endpoint(
        "openai:gpt-x",
        base_url="http://127.0.0.1:9/v1",
        api_key_env="NENYAX_TEST_KEY",
        temperature=0.2,
        max_tokens=7,
        provider_options={"max_retries": 1},
    )
    config = endpoint.config()
    assert config == {
        "model": "openai:gpt-x",
        "base_url": "http://127.0.0.1:9/v1",
        "api_key_env": "NENYAX_TEST_KEY",
        "temperature": 0.2,
        "max_tokens": 7,
        "provider_options": {"max_retries": 1},
    }
    assert "sk-very-secret-value" not in json.dumps(config)
    assert b"sk-very-secret-value" not in pickle.dumps(policy_ticket(endpoint))
    assert "sk-very-secret-value" not in repr(vars(endpoint))  # not kept on the object either
    assert endpoint.provider.api_key == "sk-very-secret-value"  # read from the variable when it opens
    again = Endpoint.from_config(config)
    assert again.config() == config
    monkeypatch.setenv("NENYAX_TEST_KEY", "sk-rotated")
    assert again.provider.api_key == "sk-rotated"  # the value where and when it opens, not a copy


def test_an_endpoint_given_the_key_value_has_no_config():
    endpoint = Endpoint("openai:m", provider_options={"api_key": "sk-x"})
    with pytest.raises(UsageError, match="api_key_env") as caught:
        endpoint.config()
    assert "sk-x" not in str(caught.value)
    with pytest.raises(CannotTravelError, match="api_key_env"):
        policy_ticket(endpoint)


def test_a_user_mistake_in_an_episode_is_raised_the_same_from_a_worker(registry, tmp_path):
    env = load("arith:add?size=4", registry=registry)
    tasks = ["add/0/0", "add/0/99", "add/0/1"]  # the second is no task of the environment
    with pytest.raises(BadURIError) as here:
        env.rollouts("reference", tasks, concurrency=1)
    with pytest.raises(BadURIError) as there:
        env.rollouts("reference", tasks, concurrency=1, sink=tmp_path / "t.jsonl", backend="process", workers=1)
    assert str(there.value) == str(here.value)
    assert "add/0/99" in str(there.value)
    assert [t.task_id for t in read_trajectories(tmp_path / "t.jsonl")] == ["add/0/0"]  # nothing new after it


def test_a_worker_that_dies_leaves_infra_errors_not_gaps(registry, monkeypatch, tmp_path):
    env = load("arith:add?size=10", registry=registry)
    fatal = env.session("add/0/3").observation
    monkeypatch.setenv(fakes.EXIT_ON, fatal)
    sink = tmp_path / "t.jsonl"
    out = env.rollouts(fakes.exit_on_question, concurrency=1, sink=sink, backend="process", workers=WORKERS)
    by_task = {t.task_id: t for t in out}
    assert sorted(by_task) == sorted(env.task_ids())
    assert len(out) == 10
    killed = by_task["add/0/3"]
    assert killed.status is Status.INFRA_ERROR
    assert killed.judgment is None
    assert "exited with code 7" in killed.error
    lost = [t for t in out if t.status is Status.INFRA_ERROR]
    assert len(lost) <= 2  # at most the dead worker's window (concurrency + 1); the survivor played the rest
    assert all(t.score == 1.0 for t in out if t.status is Status.OK)
    assert sorted(t.id for t in read_trajectories(sink)) == sorted(t.id for t in out)


def test_when_every_worker_dies_the_run_says_what_was_not_played(registry, monkeypatch, tmp_path):
    env = load("arith:add?size=10", registry=registry)
    monkeypatch.setenv(fakes.EXIT_ON, env.session("add/0/0").observation)
    sink = tmp_path / "t.jsonl"
    with pytest.raises(WorkerLostError) as caught:
        env.rollouts(fakes.exit_on_question, concurrency=1, sink=sink, backend="process", workers=1)
    recorded = list(read_trajectories(sink))
    assert recorded
    assert {t.status for t in recorded} == {Status.INFRA_ERROR}
    assert f"{len(recorded)} episode(s) under way there are recorded as infra_error" in str(caught.value)
    assert f"{10 - len(recorded)} episode(s) were not played" in str(caught.value)


def test_backends_are_named(registry):
    assert {"asyncio", "process"} <= set(backends())
    assert backend_names() == sorted({*backends(), "ray"})  # ray named even where nenyax-ray is not installed
    with pytest.raises(UsageError, match="Did you mean 'process'"):
        executor_for("proces")
    with pytest.raises(UsageError, match="needs backend='process'"):
        executor_for("asyncio", workers=2)
    with pytest.raises(UsageError, match="workers must be an integer"):
        executor_for("process", workers=0)
    assert executor_for("process", workers=3).workers == 3  # type: ignore[attr-defined]
    with pytest.raises(UsageError, match="use backend='ray'"):
        executor_for("process", address="auto")


def test_a_backend_of_another_distribution_that_is_missing_says_what_to_install(monkeypatch):
    # Core's own tests run without nenyax-ray installed, `integration` with it: no entry point is seen here, so
    # the sentence is the one a user without the distribution gets either way.
    monkeypatch.setattr(seams, "installed", lambda group: {})
    with pytest.raises(UsageError) as caught:
        executor_for("ray", workers=2)
    assert str(caught.value) == "The ray backend is not installed; pip install nenyax-ray."


def test_a_backend_another_distribution_names_by_entry_point_is_found(tmp_path, monkeypatch):
    module = "nenyax_probe_backend"
    source = "from nenyax.core.engine.runner import AsyncioPool\n\nclass Probe(AsyncioPool):\n    pass\n"
    site = write_distribution(tmp_path, "nenyax-probe", "1.0", {"probe": f"{module}:Probe"}, {module: source},
                              group="nenyax.executors")  # fmt: skip
    monkeypatch.syspath_prepend(str(site))
    assert backends()["probe"] == f"{module}:Probe"
    assert type(executor_for("probe")).__name__ == "Probe"
    env = load("arith:add?size=3", registry=Registry.from_plugins(("arith", AdapterPlugin())))
    assert [t.score for t in env.rollouts("reference", backend="probe")] == [1.0, 1.0, 1.0]


_INTERRUPTED_RUN = textwrap.dedent(
    """
    import faulthandler, signal, sys
    from nenyax.core import Registry, load
    from nenyax_testsupport.fakes import AdapterPlugin, slow_answer

    if __name__ == "__main__":
        faulthandler.register(signal.SIGUSR1)  # the test asks for every thread's stack when the run hangs
        # Ctrl-C as at a terminal: a shell that runs the tests in the background (as CI may) starts every child
        # with SIGINT ignored, and Python then never raises KeyboardInterrupt.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        env = load("arith:add?size=6", registry=Registry.from_plugins(("arith", AdapterPlugin())))
        env.rollouts(slow_answer, sink=sys.argv[1], concurrency=2, backend="process", workers=2)
    """
)


def test_ctrl_c_stops_the_workers_and_keeps_what_they_played(tmp_path):
    script, sink, marks = tmp_path / "run.py", tmp_path / "t.jsonl", tmp_path / "started"
    script.write_text(_INTERRUPTED_RUN)
    environ = {**os.environ, fakes.STARTED: str(marks), fakes.SLEEP_S: "60"}
    proc = subprocess.Popen([sys.executable, str(script), str(sink)], env=environ, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (marks.exists() and len(marks.read_text().split()) >= 4):
            time.sleep(0.1)
        workers = {int(pid) for pid in marks.read_text().split()}
        assert len(workers) == 2  # two processes, two episodes under way in each
        proc.send_signal(signal.SIGINT)
        try:
            _, stderr = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGUSR1)
            time.sleep(1)
            proc.kill()
            _, stacks = proc.communicate()
            pytest.fail(f"The run did not stop within 60 s of Ctrl-C; its threads were at:\n{stacks}")
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGINT
    assert "KeyboardInterrupt" in stderr
    for pid in workers:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    recorded = list(read_trajectories(sink))
    assert len(recorded) == 4
    assert {t.status for t in recorded} == {Status.INTERRUPTED}


_MAIN_POLICY = textwrap.dedent(
    """
    import json, sys
    from nenyax.core import Registry, load
    from nenyax_testsupport.fakes import AdapterPlugin

    OFFSET = 0  # a global of __main__: it travels with the function

    def add_up(observation):
        a, b = (int(x) for x in observation.split("What is ")[1].rstrip("?").split(" + "))
        return str(a + b + OFFSET)

    env = load("arith:add?size=4", registry=Registry.from_plugins(("arith", AdapterPlugin())))
    out = env.rollouts(add_up, backend="process", workers=2)
    print(json.dumps([[t.status.value, t.score] for t in out]))
    """
)


@pytest.mark.parametrize("how", ["-c", "-"])
def test_a_policy_of_main_travels_by_value_from_python_c_and_stdin(how, tmp_path):
    # spawn re-runs __main__ from its file, and neither `python -c` nor `python -` has one: the function
    # travels pickled by value, and a worker no longer tries to open `<stdin>`.
    command = [sys.executable, "-c", _MAIN_POLICY] if how == "-c" else [sys.executable, "-"]
    stdin = None if how == "-c" else _MAIN_POLICY
    done = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == [["ok", 1.0]] * 4


def test_a_policy_of_main_that_cannot_be_pickled_is_one_sentence(registry, monkeypatch):
    import threading
    import types

    main = types.ModuleType("__main__")
    lock = threading.Lock()
    exec("def holds_a_lock(observation):\n    return str(bool(lock))\n", main.__dict__)
    main.lock = lock
    monkeypatch.setitem(sys.modules, "__main__", main)
    env = load("arith:add?size=2", registry=registry)
    with pytest.raises(CannotTravelError) as caught:
        env.rollouts(main.holds_a_lock, backend="process", workers=1)
    _one_sentence(caught, "__main__:holds_a_lock", "pickled", "asyncio")


def test_workers_that_die_before_playing_are_one_sentence_not_infra_errors(tmp_path):
    # A script without `if __name__ == "__main__":` starts the run again in each spawned worker, which
    # multiprocessing refuses there: every worker exits before it could play.
    script, sink = tmp_path / "unguarded.py", tmp_path / "t.jsonl"
    script.write_text(
        textwrap.dedent(
            f"""
            from nenyax.core import Registry, load
            from nenyax_testsupport.fakes import AdapterPlugin

            env = load("arith:add?size=4", registry=Registry.from_plugins(("arith", AdapterPlugin())))
            env.rollouts("reference", sink={str(sink)!r}, backend="process", workers=2)
            """
        )
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert "before they could play any episode" in last, done.stderr
    assert '__name__ == "__main__"' in last
    assert not sink.exists() or sink.read_text() == ""  # no episode recorded as lost to the infrastructure
