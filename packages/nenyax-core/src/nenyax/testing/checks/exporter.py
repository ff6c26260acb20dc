"""The conformance checks of `exporter` plugins beyond the common ones (`nenyax.testing.checks.common`).

Each check writes real rows (core's shapes, made from small trajectories built here) to a real
temporary folder and looks at what is there: the format itself is the plugin's to test (a Parquet
reader, `datasets`); what every exporter owes is a suffix, a destination that appears whole at
`close` (or never, after `abort`), and every shape's schema accepted.

Each yields one sentence per problem found.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from nenyax.core.contract import rows
from nenyax.core.contract.manifest import Mode
from nenyax.core.contract.trajectory import Judgment, ModelCall, PolicyInfo, Status, Step, Trajectory
from nenyax.core.plugins.exporter import Exporter
from nenyax.testing.report import Check
from nenyax.testing.subject import Subject


def _exporter(subject: Subject) -> Exporter:
    made: Exporter = subject.instance()
    return made


def sample_trajectories() -> list[Trajectory]:
    """Two chat episodes of one group (a preference between them) and one with an array-free step."""
    policy = PolicyInfo(kind="endpoint", name="local:m", provider="local", model="m")
    made = []
    for answer, score in (("4", 1.0), ("5", 0.0)):
        prompt = ({"role": "user", "content": "2+2?"},)
        reply = {"role": "assistant", "content": answer}
        call = ModelCall(
            messages=prompt, response=reply, prompt_token_ids=(1, 2, 3), completion_token_ids=(4,), logprobs=(-0.5,)
        )
        made.append(
            Trajectory(
                env_uri="kit:add",
                manifest_digest="d",
                mode=Mode.STEP,
                task_id="t",
                seed=0,
                policy=policy,
                status=Status.OK,
                judgment=Judgment(score=score),
                steps=(Step(observation="2+2?", action=answer, reward=score, terminated=True),),
                model_calls=(call,),
                messages=(*prompt, reply),
                group_id="g",
            )
        )
    return made


_SHAPES: tuple[tuple[str, rows.RowOptions], ...] = (
    ("raw", rows.RowOptions()),
    ("sft", rows.RowOptions()),
    ("sft", rows.RowOptions(tokenized=True)),
    ("dpo", rows.RowOptions()),
    ("merged", rows.RowOptions()),
    ("steps", rows.RowOptions()),
)


def _label(shape: str, options: rows.RowOptions) -> str:
    return f"{shape} (tokenized)" if options.tokenized else shape


def has_a_suffix(subject: Subject) -> Iterator[str]:
    """`suffix` names a default destination: a string starting with a dot."""
    suffix: Any = getattr(_exporter(subject), "suffix", None)
    if not isinstance(suffix, str) or not suffix.startswith(".") or len(suffix) < 2:
        yield f"Its suffix is {suffix!r}; an exporter names its default destinations with one like '.jsonl'."


def writes_every_shape(subject: Subject) -> Iterator[str]:
    """Rows of every shape's schema are written, and `close` returns the destination, which then exists."""
    made = sample_trajectories()
    with tempfile.TemporaryDirectory() as folder:
        for shape, options in _SHAPES:
            destination = Path(folder) / f"{shape}{'-tokens' if options.tokenized else ''}{_exporter(subject).suffix}"
            writer = _exporter(subject).open(str(destination), schema=rows.schema(shape, options))
            writer.write_batch(list(rows.rows(made, shape, options)))
            where = writer.close()
            if Path(where) != destination:
                yield f"close() returned {where!r} for {_label(shape, options)} rows, not {destination}."
            if not destination.exists():
                yield f"After close(), {_label(shape, options)} rows left nothing at {destination}."


def appears_whole_at_close(subject: Subject) -> Iterator[str]:
    """Nothing is at the destination before `close`, an older file there is replaced, and `abort` leaves nothing new."""
    made = list(rows.rows(sample_trajectories(), "raw"))
    with tempfile.TemporaryDirectory() as folder:
        destination = Path(folder) / f"rows{_exporter(subject).suffix}"
        writer = _exporter(subject).open(str(destination), schema=rows.schema("raw"))
        writer.write_batch(made)
        if destination.exists():
            yield f"{destination.name} existed before close(): a killed export would leave a partial file there."
        writer.close()
        first = _snapshot(destination)
        writer = _exporter(subject).open(str(destination), schema=rows.schema("raw"))
        writer.write_batch(made[:1])
        writer.abort()
        if _snapshot(destination) != first:
            yield "abort() changed what an earlier export had written at the destination."
        left = sorted(p.name for p in Path(folder).iterdir() if p != destination)
        if left:
            yield f"abort() left {', '.join(left)} beside the destination."


def _snapshot(path: Path) -> dict[str, bytes]:
    if path.is_file():
        return {"": path.read_bytes()}
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


EXPORTER_CHECKS: tuple[Check, ...] = (
    Check(id="exporter/has-a-suffix", summary="default destinations have a suffix", run=has_a_suffix),
    Check(
        id="exporter/writes-every-shape",
        summary="raw, sft, sft tokens and dpo rows are written",
        run=writes_every_shape,
    ),
    Check(
        id="exporter/appears-whole-at-close",
        summary="the destination appears whole at close",
        run=appears_whole_at_close,
    ),
)
"""The exporter kind's own checks, in the order they run (after `common_checks("exporter")`)."""
