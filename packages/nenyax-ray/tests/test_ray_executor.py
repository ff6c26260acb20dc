"""The ``ray`` backend against a real local Ray instance: the same trajectories as in one process, each exactly once.

One instance (conftest's `ray_instance`, 2 CPUs) serves the suite; the executors find it initialised and use
it. Real environments (reasoning-gym, gymnasium) compare the backends; the worker-loss tests play core's
in-memory ``arith`` fake, through a registry that travels to the workers, with the policies of
`ray_policies`, which a worker imports by name.
"""

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest
import ray_policies

from nenyax.core import CannotTravelError, Registry, Status, UsageError, load
from nenyax.core.engine.executors import executor_for
from nenyax.core.engine.sinks import read_trajectories
from nenyax.core.errors import WorkerLostError
from nenyax.ray import RayExecutor
from nenyax_testsupport.fakes import AdapterPlugin, ScriptedChat


def _played(trajectories):
    """What must not depend on where an episode ran (its id and timing do)."""
    return [
        (t.task_id, t.seed, t.sample, t.status, t.judgment, t.policy, t.steps, t.manifest_digest) for t in trajectories
    ]


def _groups(trajectories):
    members = {}
    for t in trajectories:
        members.setdefault(t.group_id, []).append((t.task_id, t.sample))
    return sorted(sorted(m) for m in members.values())


def _arith(size):
    return load(f"arith:add?size={size}", registry=Registry.from_plugins(("arith", AdapterPlugin())))


def _plays(control):
    """(pid, question) of every episode a `ray_policies` policy started, in any process."""
    path = control / "played"
    return [tuple(line.split("\t")) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.parametrize(
    ("uri", "policy", "tasks"),
    [("reasoning_gym:basic_arithmetic?size=20", "reference", None), ("gymnasium:CartPole-v1", "random", 6)],
)
def test_ray_plays_the_same_trajectories_as_one_process_each_exactly_once(ray_instance, tmp_path, uri, policy, tasks):
    env = load(uri)
    here = env.rollouts(policy, tasks, n=2, sink=tmp_path / "here.jsonl")
    there = env.rollouts(policy, tasks, n=2, sink=tmp_path / "there.jsonl", backend="ray", workers=2)
    assert _played(there) == _played(here)
    assert len(there) == 2 * len(env.task_ids(limit=tasks))
    assert _groups(there) == _groups(here)
    assert {t.status for t in there} == {Status.OK}
    ids = [t.id for t in here + there]
    assert len(set(ids)) == len(ids)  # fresh ids, none made twice or copied between runs
    on_disk = list(read_trajectories(tmp_path / "there.jsonl"))
    assert sorted(t.id for t in on_disk) == sorted(t.id for t in there)  # each once, written by the driver


def test_a_worker_killed_mid_episode_has_its_episode_replayed_elsewhere_and_recorded_once(control, tmp_path):
    env = _arith(12)
    stalled_on = env.session("add/0/5").observation
    (control / "stall_on").write_text(stalled_on)
    killed = []

    def kill_the_stalled_worker():
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (control / "stalled").exists():
            time.sleep(0.05)
        time.sleep(0.2)  # the pid is written before the mark is closed: read it whole
        pid = int((control / "stalled").read_text())
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)

    killer = threading.Thread(target=kill_the_stalled_worker, daemon=True)
    killer.start()
    sink = tmp_path / "t.jsonl"
    out = env.rollouts(ray_policies.stall_once, sink=sink, concurrency=2, backend="ray", workers=2)
    killer.join(timeout=5)
    assert len(killed) == 1
    assert sorted(t.task_id for t in out) == sorted(env.task_ids())
    assert {t.status for t in out} == {Status.OK}  # the killed worker's episodes were played again, not lost
    assert all(t.score == 1.0 for t in out)
    recorded = list(read_trajectories(sink))
    assert sorted(t.task_id for t in recorded) == sorted(env.task_ids())  # no duplicate, no half record
    assert sorted(t.id for t in recorded) == sorted(t.id for t in out)
    plays = _plays(control)
    stalled = [pid for pid, question in plays if question == stalled_on]
    assert stalled[0] == str(killed[0])
    assert len(stalled) == 2  # started on the killed worker, finished on another one
    assert stalled[1] != stalled[0]
    assert str(os.getpid()) not in {pid for pid, _ in plays}  # every episode was played on a Ray worker


def test_an_episode_that_kills_every_worker_it_plays_on_is_one_infra_error(control, tmp_path):
    env = _arith(8)
    (control / "die_on").write_text(env.session("add/0/2").observation)
    sink = tmp_path / "t.jsonl"
    # One episode at a time per worker: only the fatal episode is under way when a worker dies.
    out = env.rollouts(ray_policies.die_on, concurrency=1, sink=sink, backend="ray", workers=2)
    by_task = {t.task_id: t for t in out}
    assert sorted(by_task) == sorted(env.task_ids())
    assert len(out) == 8
    lost = by_task["add/0/2"]
    assert lost.status is Status.INFRA_ERROR
    assert lost.judgment is None
    assert "died before the episode ended, twice (it was replayed once, on another worker)" in lost.error
    assert [t.task_id for t in out if t.status is not Status.OK] == ["add/0/2"]  # replacements played the rest
    assert all(t.score == 1.0 for t in out if t.status is Status.OK)
    assert sorted(t.id for t in read_trajectories(sink)) == sorted(t.id for t in out)
    plays = _plays(control)
    fatal = [i for i, (_, question) in enumerate(plays) if question == env.session("add/0/2").observation]
    dead = {plays[i][0] for i in fatal}
    assert len(fatal) == len(dead) == 2  # played once on each worker, and each died of it
    # Both workers were gone after the second death: whatever was played after it, a replacement played (how much
    # is left by then is timing: the survivor may have played the rest before the replay reached it).
    assert all(pid not in dead for pid, _ in plays[fatal[1] + 1 :])


def test_when_no_worker_is_left_the_run_says_what_was_not_played(control, tmp_path):
    env = _arith(6)
    (control / "die_on").write_text(env.session("add/0/0").observation)
    sink = tmp_path / "t.jsonl"
    with pytest.raises(WorkerLostError) as caught:
        env.rollouts(ray_policies.die_on, concurrency=1, sink=sink, backend="ray", workers=1)
    recorded = list(read_trajectories(sink))
    assert [(t.task_id, t.status) for t in recorded] == [("add/0/0", Status.INFRA_ERROR)]
    message = str(caught.value)
    assert message.startswith("2 Ray workers died during the run (1 episode(s) replayed elsewhere, 1 recorded")
    assert "and 5 episode(s) were not played" in message


def _one_sentence(exc_info, *names):
    message = str(exc_info.value)
    assert message.count(". ") == 0, message
    assert message.endswith("."), message
    for name in names:
        assert name in message, message


def test_a_policy_that_cannot_travel_is_one_sentence_before_any_episode(tmp_path):
    # No Ray instance: the refusal comes before Ray is started or reached.
    env = _arith(4)
    sink = tmp_path / "t.jsonl"
    for policy, names in [
        (lambda observation: "0", ("lambda",)),
        (ScriptedChat("4"), ("scripted-chat", "lives in this process")),
    ]:
        with pytest.raises(CannotTravelError) as caught:
            env.rollouts(policy, sink=sink, backend="ray", workers=1)
        _one_sentence(caught, *names)
    assert not sink.exists() or sink.read_bytes() == b""


def test_the_backend_is_named_ray_and_takes_an_address():
    executor = executor_for("ray", workers=3, address="auto")
    assert isinstance(executor, RayExecutor)
    assert (executor.workers, executor.address) == (3, "auto")
    with pytest.raises(UsageError, match="workers must be an integer"):
        RayExecutor(workers=0)
    with pytest.raises(UsageError, match="address must be"):
        RayExecutor(address=" ")


def test_a_user_mistake_in_an_episode_is_raised_as_in_one_process(ray_instance, tmp_path):
    env = _arith(4)
    tasks = ["add/0/0", "add/0/99", "add/0/1"]  # the second is no task of the environment
    with pytest.raises(Exception) as here:  # noqa: PT011 - whichever it is, it must be the same
        env.rollouts("reference", tasks, concurrency=1)
    with pytest.raises(type(here.value)) as there:
        env.rollouts("reference", tasks, concurrency=1, sink=tmp_path / "t.jsonl", backend="ray", workers=1)
    assert str(there.value) == str(here.value)
    assert "add/0/99" in str(there.value)
    assert [t.task_id for t in read_trajectories(tmp_path / "t.jsonl")] == ["add/0/0"]  # nothing new after it


_CONNECTING_RUN = textwrap.dedent(
    """
    import json, sys
    import ray
    from nenyax.core import Registry, load
    from nenyax.core.contract.events import Observer
    from nenyax_testsupport.fakes import AdapterPlugin
    from nenyax.ray import RayExecutor

    class Where(Observer):
        seen = set()

        def on_episode_ended(self, event):
            self.seen.add(ray.get_runtime_context().gcs_address)

    env = load("arith:add?size=6", registry=Registry.from_plugins(("arith", AdapterPlugin())))
    out = env.rollouts("reference", observers=[Where()], backend=RayExecutor(workers=2, address=sys.argv[1]))
    print(json.dumps({"scores": [t.score for t in out], "gcs": sorted(Where.seen), "after": ray.is_initialized()}))
    """
)


def test_an_address_connects_to_that_cluster_and_leaves_it_running(ray_instance, tmp_path):
    # Another driver (a subprocess: this one is connected already) joins the suite's instance by its address.
    script = tmp_path / "run.py"
    script.write_text(_CONNECTING_RUN)
    done = subprocess.run(
        [sys.executable, str(script), ray_instance.address], capture_output=True, text=True, timeout=180, check=False
    )
    assert done.returncode == 0, done.stderr
    played = json.loads(done.stdout.splitlines()[-1])
    assert played["scores"] == [1.0] * 6
    assert played["gcs"] == [ray_instance.address]  # played on that cluster, not a local instance of its own
    assert played["after"] is False  # the driver disconnected at the end of the run
    import ray

    assert ray.cluster_resources()["CPU"] == 2  # and the cluster it joined is still up


def test_judges_judge_on_the_driver_each_trajectory_coming_back_from_ray(ray_instance, tmp_path):
    # A function judge and a group of three whose episodes may come back from different actors: both judge
    # here, before the sink writes, and a group is judged once it is whole.
    env = _arith(6)
    judges = ["nenyax_testsupport.fakes:answer_is_even", "nenyax_testsupport.fakes:FirstInOrder"]
    there = env.rollouts("random", 2, n=3, sink=tmp_path / "there.jsonl", backend="ray", workers=2, judges=judges)
    assert len(there) == 6
    written = {t.id: t for t in read_trajectories(tmp_path / "there.jsonl")}
    for trajectory in there:
        assert [v.label for v in trajectory.verdicts] == ["native", "answer_is_even", "FirstInOrder"]
        assert written[trajectory.id].verdicts == trajectory.verdicts  # judged before the sink wrote it
    for group in _by_group(there):
        answers = [t.steps[-1].action for t in group]
        firsts = [t.judgment.components["FirstInOrder"] for t in group]
        assert firsts == [float(a == min(answers)) for a in answers]


def _by_group(trajectories):
    members = {}
    for t in trajectories:
        members.setdefault(t.group_id, []).append(t)
    return list(members.values())
