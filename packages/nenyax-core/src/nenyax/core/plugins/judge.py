"""The `judge` kind: turns an answer, or a whole finished trajectory, into a `Judgment`.

Every judge is one `Judge`: an object whose ``capabilities`` (`JudgeCapabilities`) declare what it
judges, and which has the method of each capability it declares:

* ``answer``, `AnswerJudge.judge(answer, reference)`: question/answer formats (the datasets adapter's
  ``exact``/``numeric``/``math``, reasoning-gym's native scorers). The answer is the text the
  session extracted from the policy's reply.
* ``trajectory``, `TrajectoryJudge.judge_trajectory(trajectory, reference)`: judges that need the whole
  episode (a return over steps, an LLM judge reading the transcript). The trajectory is complete; a
  format's judge gets it unjudged (``judgment is None``), a judge put on beside it (``--judge``) with the
  format's own judgment.
* ``group``, `GroupJudge.judge_group(trajectories, reference)`: judges the finished episodes of one task
  together, relative to each other (put on with ``--judge``; the engine holds a group's episodes until all
  have finished).
* ``model``, `ModelJudge.ajudge_trajectory(trajectory, reference, calls)`: a trajectory judge that asks a
  model (``model=``, ``base_url=``), each call appended to `calls` and kept beside its verdict.

A caller builds a judge with `nenyax.core.plugins.interfaces.create` and names the capability it needs
(``needs=("answer",)``): a judge without it is refused in one sentence, before any episode. Either
method raises `VerifierFailure` when it cannot decide; it never returns a made-up 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import attrs

if TYPE_CHECKING:
    from nenyax.core.contract.trajectory import Judgment, ModelCall, Trajectory


@attrs.frozen(kw_only=True)
class JudgeCapabilities:
    """What a judge declares it judges; each capability it declares, it implements (and the kit checks)."""

    answer: bool = False
    """It has ``judge(answer, reference)``: it judges one extracted answer."""
    trajectory: bool = False
    """It has ``judge_trajectory(trajectory, reference)``: it judges a whole finished episode."""
    group: bool = False
    """It has ``judge_group(trajectories, reference)``: it judges the finished episodes of one task together, each
    relative to the others (GRPO's group), one `Judgment` per episode in their order."""
    model: bool = False
    """It asks a model for its verdict: its factory takes ``model=`` (``provider:model``) and ``base_url=`` (an
    OpenAI-compatible server), and ``ajudge_trajectory(trajectory, reference, calls)`` appends each call it makes
    to `calls`, so the engine keeps them beside its verdict (an unreadable reply included)."""


@runtime_checkable
class Judge(Protocol):
    """What a judge plugin's factory returns: an object declaring its `JudgeCapabilities`.

    The methods come with the capabilities: `AnswerJudge` for ``answer``, `TrajectoryJudge` for
    ``trajectory`` (the kinds table, ``KINDS["judge"].capabilities``, maps each to its protocol).
    """

    @property
    def capabilities(self) -> JudgeCapabilities:
        """What this judge judges: an answer, a trajectory, or both."""
        ...


@runtime_checkable
class AnswerJudge(Protocol):
    """The ``answer`` capability: judges one extracted answer against a reference (a gold answer, a format's entry)."""

    def judge(self, answer: str, reference: Any) -> Judgment:
        """Judge `answer` against `reference`; garbage scores low, an undecidable case raises `VerifierFailure`."""
        ...


@runtime_checkable
class TrajectoryJudge(Protocol):
    """The ``trajectory`` capability: judges a whole finished episode."""

    def judge_trajectory(self, trajectory: Trajectory, reference: Any) -> Judgment:
        """Judge `trajectory` (complete, unjudged); raise `VerifierFailure` when it cannot decide."""
        ...


@runtime_checkable
class ModelJudge(Protocol):
    """The ``model`` capability: a trajectory judge that asks a model, its calls recorded."""

    async def ajudge_trajectory(self, trajectory: Trajectory, reference: Any, calls: list[ModelCall]) -> Judgment:
        """Judge `trajectory`, appending each model call to `calls`; a reply that states no verdict, or a call that
        fails, raises `VerifierFailure` (the calls made stay in `calls`)."""
        ...


@runtime_checkable
class GroupJudge(Protocol):
    """The ``group`` capability: judges the episodes of one task together (an async ``ajudge_group(trajectories,
    reference, calls)`` is used instead where the judge has one, its model calls kept)."""

    def judge_group(self, trajectories: Sequence[Trajectory], reference: Any) -> Sequence[Judgment]:
        """One `Judgment` per episode of `trajectories`, in their order; `VerifierFailure` when it cannot decide."""
        ...
