"""The kinds table is the one source of truth: hookspecs, interfaces, registry and kit agree with it."""

from __future__ import annotations

import inspect
import typing

import pytest

from nenyax.core import hookspecs
from nenyax.core.contract.manifest import Mode
from nenyax.core.contract.trajectory import Group, Judgment, PolicyInfo, Status, Trajectory
from nenyax.core.engine.judges import ReturnJudge
from nenyax.core.engine.learning import update
from nenyax.core.kinds import KINDS
from nenyax.core.plugins.interfaces import implements, interface
from nenyax.core.plugins.sandbox import ExecResult, SandboxSpec
from nenyax.testing.sandbox_fake import LocalProcessSandbox


def test_every_kind_has_a_hookspec_and_every_hookspec_a_kind():
    specs = {name for name, fn in vars(hookspecs).items() if name.startswith("nenyax_register_") and callable(fn)}
    assert specs == {kind.hook for kind in KINDS.values()}
    for kind in KINDS.values():
        doc = inspect.getdoc(getattr(hookspecs, kind.hook))
        assert doc and kind.interface.partition(":")[0] in doc, f"{kind.hook}'s docstring names its interface"


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_interface_resolves_to_a_documented_protocol(kind):
    # A judge's interface is a union of two protocols (answer judges and trajectory judges).
    for protocol in typing.get_args(interface(kind)) or (interface(kind),):
        assert inspect.getdoc(protocol)
        methods = [m for m in dir(protocol) if not m.startswith("_") and callable(getattr(protocol, m))]
        assert methods, f"the {kind} interface declares no methods"
        for name in methods:
            assert inspect.getdoc(getattr(protocol, name)), f"{kind}.{name} has no docstring"


def test_a_judge_implements_either_method():
    assert implements("judge", ReturnJudge())
    assert not implements("judge", object())


def _traj(status, score, task="t"):
    judgment = None if score is None else Judgment(score=score)
    return Trajectory(
        env_uri="x:y",
        manifest_digest="d",
        mode=Mode.STEP,
        task_id=task,
        seed=0,
        policy=PolicyInfo(kind="test"),
        status=status,
        judgment=judgment,
        group_id="g",
    )


def test_a_learner_only_ever_sees_trainable_trajectories():
    seen = []

    class Recorder:
        def update(self, groups):
            seen.extend(t.status for g in groups for t in g.trajectories)
            return {"loss": 1.0}

    group = Group(
        group_id="g",
        task_id="t",
        trajectories=(
            _traj(Status.OK, 1.0),
            _traj(Status.INFRA_ERROR, None),
            _traj(Status.POLICY_ERROR, 0.0),
            _traj(Status.TIMEOUT, None),
        ),
    )
    only_failures = Group(group_id="h", task_id="u", trajectories=(_traj(Status.INFRA_ERROR, None, "u"),))
    assert update(Recorder(), [group, only_failures]) == {"loss": 1.0}
    assert seen == [Status.OK, Status.POLICY_ERROR]
    seen.clear()
    assert update(Recorder(), [only_failures]) == {} and seen == []


def test_a_sandbox_spec_names_one_source_and_sane_limits(tmp_path):
    with pytest.raises(ValueError, match="exactly one"):
        SandboxSpec()
    with pytest.raises(ValueError, match="memory_mb"):
        SandboxSpec(image="debian:12", memory_mb=0)
    assert SandboxSpec(context=tmp_path).context == tmp_path


def test_the_local_sandbox_keeps_a_non_zero_exit_as_data_and_kills_a_command_past_its_timeout(tmp_path):
    import asyncio

    (tmp_path / "x.txt").write_text("hi")

    async def run():
        backend = LocalProcessSandbox()
        image = await backend.build(SandboxSpec(context=tmp_path))
        async with await backend.start(image) as box:
            failed = await box.exec("exit 3")
            slow = await box.exec(["sleep", "5"], timeout=0.2)
            read = await box.exec(["cat", "x.txt"])
            await box.put(tmp_path / "x.txt", "/workspace/copy/y.txt")
            await box.get("copy/y.txt", tmp_path / "out.txt")
        return image, failed, slow, read

    image, failed, slow, read = asyncio.run(run())
    assert isinstance(failed, ExecResult) and failed.exit_code == 3 and not failed.ok
    assert slow.timed_out and slow.duration < 3
    assert read.stdout == "hi" and (tmp_path / "out.txt").read_text() == "hi"
    assert image.digest.startswith("sha256:")
