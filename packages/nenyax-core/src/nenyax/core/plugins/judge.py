"""The `judge` kind: turns an answer, or a whole finished trajectory, into a `Judgment`.

A judge implements either method or both:

* `AnswerJudge.judge(answer, reference)`: question/answer formats (the datasets adapter's
  ``exact``/``numeric``/``math``, reasoning-gym's native scorers). The answer is the text the
  session extracted from the policy's reply.
* `TrajectoryJudge.judge_trajectory(trajectory, reference)`: judges that need the whole episode
  (a return over steps, an LLM judge reading the transcript). The trajectory is complete but
  unjudged (``judgment is None``).

Either raises `VerifierFailure` when it cannot decide; it never returns a made-up 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from nenyax.core.contract.trajectory import Judgment, Trajectory
    from nenyax.core.plugins.registry import Registry


@runtime_checkable
class AnswerJudge(Protocol):
    """Judges one extracted answer against a reference (the gold answer, or a format's own entry)."""

    def judge(self, answer: str, reference: Any) -> Judgment:
        """Judge `answer` against `reference`; garbage scores low, an undecidable case raises `VerifierFailure`."""
        ...


@runtime_checkable
class TrajectoryJudge(Protocol):
    """Judges a whole finished episode."""

    def judge_trajectory(self, trajectory: Trajectory, reference: Any) -> Judgment:
        """Judge `trajectory` (complete, unjudged); raise `VerifierFailure` when it cannot decide."""
        ...


Judge = AnswerJudge | TrajectoryJudge
"""What a judge plugin's factory returns: an answer judge, a trajectory judge, or both."""


def is_judge(obj: object) -> bool:
    """True when `obj` implements at least one of the two judging methods."""
    return isinstance(obj, AnswerJudge | TrajectoryJudge)


def create_judge(registry: Registry, name: str, options: Mapping[str, Any] | None = None) -> Any:
    """The judge plugin `name` built with `options`; every mistake is one `BadURIError` sentence."""
    from nenyax.core.errors import BadURIError, UnknownPluginError, UsageError

    try:
        factory = registry.factory("judge", name)
    except UnknownPluginError as exc:
        raise BadURIError(str(exc).replace("No judge named", "No judge plugin named")) from exc
    try:
        judge = factory(**dict(options or {}))
    except UsageError:
        raise
    except TypeError as exc:
        msg = f"The judge {name!r} does not take the options {sorted(options or {})} ({exc})."
        raise BadURIError(msg) from exc
    if not is_judge(judge):
        msg = (
            f"The judge plugin {name!r} returned {type(judge).__name__}, which has neither "
            "judge(answer, reference) nor judge_trajectory(trajectory, reference)."
        )
        raise BadURIError(msg)
    return judge
