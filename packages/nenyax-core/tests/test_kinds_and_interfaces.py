"""The kinds table is the one source of truth: hookspecs, interfaces, registry and kit agree with it."""

from __future__ import annotations

import inspect
import typing

import pytest

from nenyax.core import hookspecs
from nenyax.core.builtin_plugins.return_judge import ReturnJudge
from nenyax.core.contract.manifest import Mode
from nenyax.core.contract.trajectory import Group, Judgment, PolicyInfo, Status, Trajectory
from nenyax.core.engine.learning import update
from nenyax.core.errors import UsageError
from nenyax.core.kinds import FACTORY_CONVENTION, KINDS
from nenyax.core.plugins.interfaces import capability_interface, create, declared, implements, interface, missing
from nenyax.core.plugins.registry import Registry
from nenyax.core.plugins.sandbox import ExecResult, SandboxSpec
from nenyax_testsupport.fakes import (
    ArithAdapter,
    ClaimsListingAdapter,
    ClaimsTrajectoryJudge,
    KindPlugin,
    LengthJudge,
    ListingArithAdapter,
    UndeclaredJudge,
)
from nenyax_testsupport.sandbox_fake import LocalProcessSandbox


def test_every_kind_has_a_hookspec_and_every_hookspec_a_kind():
    specs = {name for name, fn in vars(hookspecs).items() if name.startswith("nenyax_register_") and callable(fn)}
    assert specs == {kind.hook for kind in KINDS.values()}
    for kind in KINDS.values():
        doc = inspect.getdoc(getattr(hookspecs, kind.hook))
        assert doc, f"{kind.hook}'s docstring names its interface"
        assert kind.interface.partition(":")[0] in doc, f"{kind.hook}'s docstring names its interface"


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_states_the_one_factory_convention(kind):
    row = KINDS[kind]
    assert FACTORY_CONVENTION == "factory(**options) -> instance"
    assert row.factory_signature.startswith("factory(")
    assert "**options) -> " in row.factory_signature
    assert row.factory_signature.endswith(row.interface.partition(":")[2])
    # The hookspec's docstring (the spec) gives the same call, with the kind's standard options.
    doc = " ".join(inspect.getdoc(getattr(hookspecs, row.hook)).split())
    call = "factory(" + "".join(f"{o}=..., " for o in row.options) + "**options)"
    assert f"``{call}``" in doc, f"{row.hook} does not state {call}"
    assert "FACTORY_CONVENTION" in inspect.getdoc(hookspecs)
    assert "factory(**options) -> instance" in inspect.getdoc(hookspecs)


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_interface_and_capability_resolves_to_a_documented_protocol(kind):
    protocols = [interface(kind), *(capability_interface(kind, c) for c in KINDS[kind].capabilities)]
    methods = []
    for protocol in protocols:
        assert inspect.getdoc(protocol), f"{protocol.__name__} has no docstring"
        assert typing.get_args(protocol) == (), "an interface is one protocol, never a union"
        for name in [m for m in dir(protocol) if not m.startswith("_")]:
            attr = getattr(protocol, name)
            if callable(attr) or isinstance(attr, property):
                methods.append(name)
                assert inspect.getdoc(attr), f"{kind}: {protocol.__name__}.{name} has no docstring"
    assert methods, f"the {kind} interface declares no methods"


def test_a_judge_declares_what_it_judges_and_has_those_methods():
    assert implements("judge", ReturnJudge())
    assert declared(ReturnJudge()) == {"trajectory"}
    assert implements("judge", LengthJudge())
    assert declared(LengthJudge()) == {"answer"}
    assert not implements("judge", object())
    assert missing("judge", ClaimsTrajectoryJudge()) == (
        "declares 'trajectory' but lacks its methods (nenyax.core.plugins.judge:TrajectoryJudge)"
    )
    assert missing("judge", UndeclaredJudge()).startswith("declares none of the judge capabilities")


def test_a_caller_names_the_capability_it_needs_and_a_judge_without_it_is_one_sentence():
    registry = Registry.from_plugins(("fake", KindPlugin("judge", "length", "nenyax_testsupport.fakes:LengthJudge")))
    assert create(registry, "judge", "length", {"size": 2}, needs=("answer",)).size == 2
    with pytest.raises(
        UsageError, match=r"^The judge 'length' cannot be used here: it does not declare 'trajectory'\.$"
    ):
        create(registry, "judge", "length", needs=("trajectory",))
    broken = Registry.from_plugins(
        ("fake", KindPlugin("judge", "claims", "nenyax_testsupport.fakes:ClaimsTrajectoryJudge"))
    )
    with pytest.raises(UsageError, match=r"^The judge plugin 'claims' declares 'trajectory' but lacks its methods"):
        create(broken, "judge", "claims")


def test_an_adapter_declares_listing_like_any_capability():
    assert declared(ArithAdapter()) == frozenset()
    assert implements("adapter", ArithAdapter())
    assert declared(ListingArithAdapter()) == {"listing"}
    assert implements("adapter", ListingArithAdapter())
    assert not implements("adapter", ClaimsListingAdapter())


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
    assert update(Recorder(), [only_failures]) == {}
    assert seen == []


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
    assert isinstance(failed, ExecResult)
    assert failed.exit_code == 3
    assert not failed.ok
    assert slow.timed_out
    assert slow.duration < 3
    assert read.stdout == "hi"
    assert (tmp_path / "out.txt").read_text() == "hi"
    assert image.digest.startswith("sha256:")
