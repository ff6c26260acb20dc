"""The conformance checks of `learner` plugins beyond the common ones (`nenyax.testing.checks.common`).

Each check drives the learner the way ``nenyax train`` does (`nenyax.core.engine.training`): a policy to
play with, an update on a group of trainable episodes built here (chat messages, token ids and
logprobs, so a learner that trains on tokens has them too), ``save(directory)`` into an empty folder,
``restore(revision)`` in the same instance and in a new one built by the same factory. What a learner
owes is observable from outside: the policy it plays, the metrics it reports, and the files its saves
write. "Back to a revision" is judged on those files: a save right after ``restore`` writes what the
save that made the revision wrote (files that differ between two saves in a row, a timestamp say,
are left out of the comparison).

A torch learner trains its real model here: give it a small one (``model=local:<folder>``) to keep the
checks quick. Each yields one sentence per problem found.
"""

from __future__ import annotations

import hashlib
import inspect
import math
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from nenyax.core.contract.manifest import Mode
from nenyax.core.contract.trajectory import Group, Judgment, ModelCall, PolicyInfo, Status, Step, Trajectory
from nenyax.core.engine.policies import Policy
from nenyax.core.errors import NenyaxError
from nenyax.testing.report import Check, Finding, Severity
from nenyax.testing.subject import Subject

QUESTION = "What is 2 + 2?"


def _learner(subject: Subject) -> Any:
    return subject.instance()


def _fresh(subject: Subject) -> Any:
    """Another instance from the same factory and options: what ``nenyax train --resume`` builds."""
    return subject.registry.create(subject.kind, subject.name, **subject.options)


def sample_groups() -> list[Group]:
    """One group of one task, as the engine hands it over: a passed episode, a failed one and a
    policy error without a model call (all three trainable), each call with token ids and logprobs."""
    policy = PolicyInfo(kind="kit", name="kit", revision="kit-0")
    prompt = ({"role": "user", "content": QUESTION},)
    members = []
    for answer, ids, status, judgment in (
        ("4", (13, 14), Status.OK, Judgment(score=1.0, passed=True, judge="kit")),
        ("5", (15, 16), Status.OK, Judgment(score=0.0, passed=False, judge="kit")),
        (None, (), Status.POLICY_ERROR, None),
    ):
        calls: tuple[ModelCall, ...] = ()
        steps: tuple[Step, ...] = ()
        if answer is not None and judgment is not None:
            reply = {"role": "assistant", "content": answer}
            steps = (Step(observation=QUESTION, action=answer, reward=judgment.score, terminated=True),)
            calls = (
                ModelCall(
                    messages=prompt,
                    response=reply,
                    provider="kit",
                    model="kit",
                    prompt_token_ids=(10, 11, 12),
                    completion_token_ids=ids,
                    logprobs=(-1.0, -1.5),
                ),
            )
        members.append(
            Trajectory(
                env_uri="kit:add",
                manifest_digest="kit",
                mode=Mode.STEP,
                task_id="add/0",
                seed=0,
                policy=policy,
                status=status,
                judgment=judgment,
                steps=steps,
                model_calls=calls,
                messages=(*prompt, calls[0].response) if calls else prompt,
                error=None if calls else "the policy raised",
                group_id="kit-group",
                token_faithful=True if calls else None,
            )
        )
    return [Group(group_id="kit-group", task_id="add/0", trajectories=tuple(members), policy=policy)]


def _digests(folder: Path) -> dict[str, str]:
    """Each file under `folder` (relative path) -> its sha256: a save's content, without holding it in memory."""
    out = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            digest = hashlib.sha256()
            with path.open("rb") as file:
                while chunk := file.read(1 << 20):
                    digest.update(chunk)
            out[str(path.relative_to(folder))] = digest.hexdigest()
    return out


def _save(learner: Any, folder: Path) -> tuple[str, dict[str, str]]:
    """``save`` into a new empty `folder`: the revision and what was written."""
    folder.mkdir(parents=True)
    return str(learner.save(folder)), _digests(folder)


def _stable(first: Mapping[str, str], again: Mapping[str, str]) -> dict[str, str]:
    """The files two saves of one state wrote alike: what a save after a restore must write again."""
    return {name: digest for name, digest in first.items() if again.get(name) == digest}


def _differs(expected: Mapping[str, str], seen: Mapping[str, str]) -> list[str]:
    return sorted(name for name, digest in expected.items() if seen.get(name) != digest)


def _listed(names: list[str]) -> str:
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def _unobservable(check: str, stable: Mapping[str, str]) -> Finding:
    """The warning for a restore the saved files cannot show (`stable`: what two saves in a row wrote alike)."""
    why = (
        "The update changed nothing that save writes"
        if stable
        else "Two saves in a row wrote no file alike (a unique name or a time in each)"
    )
    return Finding(
        check=check, message=f"{why}, so this check could not see the restore work.", severity=Severity.WARNING
    )


def _crash(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


def policy_is_a_policy(subject: Subject) -> Iterator[str]:
    """`policy()` (and `eval_policy()`, where the learner has one) returns a Policy whose ``info.revision``
    names the learner's current revision."""
    learner = _learner(subject)
    makers = [("policy", learner.policy)]
    if callable(getattr(learner, "eval_policy", None)):
        makers.append(("eval_policy", learner.eval_policy))
    for name, make in makers:
        made = make()
        if not isinstance(made, Policy):
            yield f"{name}() returned a {type(made).__name__}, not a Policy (info, speaks_text and async act(turn))."
            continue
        if not inspect.iscoroutinefunction(made.act):
            yield f"{name}().act is not an async method; the rollout loop awaits it."
        info = made.info
        if not isinstance(info, PolicyInfo):
            yield f"{name}().info is a {type(info).__name__}, not a PolicyInfo (trajectories record it)."
        elif not isinstance(info.revision, str) or not info.revision:
            yield f"{name}().info.revision is {info.revision!r}; it must name the learner's current revision."


def update_returns_metrics(subject: Subject) -> Iterator[str]:
    """`update` on a group of trainable episodes returns a mapping of names to finite numbers."""
    metrics = _learner(subject).update(sample_groups())
    if not isinstance(metrics, Mapping):
        yield f"update() returned a {type(metrics).__name__}, not a mapping of metric names to numbers."
        return
    for key, value in metrics.items():
        if not isinstance(key, str):
            yield f"update() returned the metric name {key!r}; name each metric with a string."
        elif isinstance(value, bool) or not isinstance(value, int | float):
            yield f"update() returned {key}={value!r}; each metric is a number (metrics.jsonl records it)."
        elif not math.isfinite(value):
            yield f"update() returned {key}={value!r} on a small sound group; each metric must be finite."


def save_gives_a_revision(subject: Subject) -> Iterator[str]:
    """`save(directory)` into an empty folder writes its state there and returns the revision as a string."""
    with tempfile.TemporaryDirectory(prefix="nenyax-kit-") as folder:
        revision = _learner(subject).save(Path(folder))
        if not isinstance(revision, str) or not revision:
            yield f"save() returned {revision!r}; it must return the revision as a non-empty string."
        if not any(Path(folder).iterdir()):
            yield "save() wrote nothing under its directory; everything a revision needs must live there."


def restore_goes_back(subject: Subject) -> Iterator[str | Finding]:
    """``restore`` of a revision undoes the updates made since: a save right after it writes what that
    revision's save wrote."""
    learner = _learner(subject)
    with tempfile.TemporaryDirectory(prefix="nenyax-kit-") as folder:
        here = Path(folder)
        revision, first = _save(learner, here / "first")
        expected = _stable(first, _save(learner, here / "again")[1])
        learner.update(sample_groups())
        updated = _save(learner, here / "updated")[1]
        try:
            learner.restore(revision)
        except Exception as exc:  # noqa: BLE001 - a restore that raises on its own revision is the finding
            yield f"restore({revision!r}), of the revision save had just returned, raised {_crash(exc)}."
            return
        changed = _differs(expected, _save(learner, here / "back")[1])
        if changed:
            yield f"After restore({revision!r}) a save still differs from that revision's in {_listed(changed)}."
        elif not _differs(expected, updated):
            yield _unobservable("learner/restore-goes-back", expected)


def restores_in_a_new_instance(subject: Subject) -> Iterator[str | Finding]:
    """A new instance from the same factory and options, restored to a revision, is in that revision's
    state (what ``nenyax train --resume`` does in a new process)."""
    learner = _learner(subject)
    with tempfile.TemporaryDirectory(prefix="nenyax-kit-") as folder:
        here = Path(folder)
        learner.update(sample_groups())
        revision, first = _save(learner, here / "first")
        expected = _stable(first, _save(learner, here / "again")[1])
        other = _fresh(subject)
        try:
            untouched = _save(other, here / "untouched")[1]
            try:
                other.restore(revision)
            except Exception as exc:  # noqa: BLE001 - a revision only its own instance can read is the finding
                yield f"A new instance's restore({revision!r}) raised {_crash(exc)}."
                return
            changed = _differs(expected, _save(other, here / "restored")[1])
        finally:
            other.close()
        if changed:
            yield f"A new instance restored to {revision!r} saves differently from it in {_listed(changed)}."
        elif not _differs(expected, untouched):
            yield _unobservable("learner/restores-in-a-new-instance", expected)


def bad_revision_is_refused(subject: Subject) -> Iterator[str]:
    """``restore`` of a revision that was never saved (a missing folder, an empty one) raises a NenyaxError
    saying so, not a raw traceback, and never silently keeps going."""
    learner = _learner(subject)
    with tempfile.TemporaryDirectory(prefix="nenyax-kit-") as folder:
        cases = (("a folder that does not exist", str(Path(folder) / "never-saved")), ("an empty folder", folder))
        for label, revision in cases:
            try:
                learner.restore(revision)
            except NenyaxError as exc:
                if not str(exc).strip():
                    yield f"restore() of {label} raised {type(exc).__name__} without a sentence saying why."
            except Exception as exc:  # noqa: BLE001 - any other exception is a traceback the user would see
                yield (
                    f"restore() of {label} raised {_crash(exc)}; raise a NenyaxError (UsageError) "
                    "saying the revision cannot be restored."
                )
            else:
                yield f"restore() of {label} ({revision}) raised nothing; a revision it cannot return to is an error."


def close_is_idempotent(subject: Subject) -> Iterator[str]:
    """``close`` releases a new instance, and may be called twice."""
    other = _fresh(subject)
    for turn in ("first", "second"):
        try:
            other.close()
        except Exception as exc:  # noqa: BLE001 - close raising is the finding
            yield f"close() raised {_crash(exc)} the {turn} time it was called."
            return


LEARNER_CHECKS: tuple[Check, ...] = (
    Check(id="learner/policy-is-a-policy", summary="policy() is a Policy naming its revision", run=policy_is_a_policy),
    Check(id="learner/update-returns-metrics", summary="update returns finite metrics", run=update_returns_metrics),
    Check(id="learner/save-gives-a-revision", summary="save writes its folder; a revision", run=save_gives_a_revision),
    Check(id="learner/restore-goes-back", summary="restore undoes the updates since", run=restore_goes_back),
    Check(
        id="learner/restores-in-a-new-instance",
        summary="a new instance restores a revision",
        run=restores_in_a_new_instance,
    ),
    Check(id="learner/bad-revision-is-refused", summary="unsaved revisions are refused", run=bad_revision_is_refused),
    Check(id="learner/close-is-idempotent", summary="close may be called twice", run=close_is_idempotent),
)
"""The learner kind's own checks, in the order they run (after `common_checks("learner")`)."""
