"""The episode event stream: what happens in an episode, as it happens, for whoever observes it.

This module is the specification. The engine publishes six events; an *observer* is any object with
one or more of the methods below (subclass `Observer` to get no-op defaults), passed as
``env.rollout(..., observers=[...])``, ``env.rollouts(..., observers=[...])``, ``run_jobs(...,
observers=...)`` or ``check(..., observers=...)``. The JSONL sink, the CLI's progress bars, traces and
a remote executor's stream all consume this one stream; none hooks the engine its own way.

=====================  ==================================================================  ==========================
method                 when                                                                event
=====================  ==================================================================  ==========================
on_episode_started     the trajectory id exists; before the session opens or the native    `EpisodeStarted`
                       loop runs, so before the episode's first model call
on_model_call_started  a model call is sent (to an Endpoint or an in-process policy)       `ModelCallStarted`
on_model_call_ended    its reply came back (`call`), or it failed (`error`)                `ModelCallEnded`
on_tool_call           a tool call finished (step mode: after the session answered the     `ToolCalled`
                       action; native loops: when its ``tool`` message is first seen)
on_step                a step-mode turn was recorded (failed and retried turns too)        `StepTaken`
on_episode_ended       the episode is over and judged, whatever its status (interrupted   `EpisodeEnded`
                       too): the final trajectory
=====================  ==================================================================  ==========================

Ordering, for one episode: `EpisodeStarted` first and `EpisodeEnded` last, each exactly once; every
event in between carries the same ``trajectory_id``, which is the trajectory's ``id``, the recording
proxy's route (``/e/<trajectory_id>/v1``) and the sink line's ``id``. A call's ``ModelCallStarted``
comes before its ``ModelCallEnded`` (with the same ``call_id``); in step mode the model calls that
chose an action come before that action's `ToolCalled`, which comes before its `StepTaken`. A native
loop's tool call is published when the request carrying its answer arrives (before that request's
``ModelCallStarted``), or, answered only in the final transcript or never, just before
`EpisodeEnded`. Events of concurrent episodes interleave: tell them apart by ``trajectory_id``.
The one episode without an `EpisodeEnded` is one a user mistake stopped (a `UsageError`: an unknown
task, a policy the environment cannot serve), which has no trajectory: the run raises instead.

Threads: observers are called one at a time, on the thread running the episodes' event loop (the
caller's thread for a synchronous ``env.rollout`` that needs no loop), never from a worker thread.
They must be quick and must not block: the episode waits while an observer runs, and so does every
other episode on the loop. An observer with slow work (a network exporter) hands the event to a
queue or a thread of its own. Events are frozen; an observer must not mutate what they hold.

When an observer raises (an `Exception`), the episode is never lost: the other observers still get
the event, the trajectory is still written to the sink and returned. The failure is reported on
the ``nenyax.events`` logger at WARNING, with the traceback, the first time each observer fails in
a run; later failures of the same observer are counted in `Observers.failures` (and logged at
DEBUG). The one exception is an observer with ``essential = True`` (the JSONL sink): its exception
in ``on_episode_ended`` stops the run (the episode ended, but its record could not be kept, which
must not pass unnoticed); essential observers are called before the others, so an observer that sees
an episode end can rely on it being on disk. Elsewhere an essential observer is reported like any
other.

Nobody observing costs nothing: the engine builds an event only when some observer has its method.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

import attrs

from nenyax.core.contract.chat import ChatRequest, TextRequest
from nenyax.core.contract.trajectory import ModelCall, PolicyInfo, Step, ToolCall, Trajectory
from nenyax.core.errors import UsageError

log = logging.getLogger("nenyax.events")


@attrs.frozen(kw_only=True)
class EpisodeStarted:
    """An episode began: its trajectory id exists, nothing has run yet."""

    trajectory_id: str
    env_uri: str
    task_id: str | None
    """The task asked for (None: the environment picks its first task)."""
    seed: int | None
    sample: int
    """Which repeat of the task this is."""
    group_id: str | None
    policy: PolicyInfo
    started: float
    """Wall-clock time (Unix seconds); the trajectory's ``timing.started``."""


@attrs.frozen(kw_only=True)
class EpisodeEnded:
    """An episode is over: its final, judged trajectory (any status)."""

    trajectory: Trajectory

    @property
    def trajectory_id(self) -> str:
        """The trajectory's id, as every other event of the episode carries it."""
        return self.trajectory.id


@attrs.frozen(kw_only=True)
class ModelCallStarted:
    """A model call was sent."""

    trajectory_id: str
    call_id: str
    """The id the recorded `ModelCall` will have."""
    request: ChatRequest | TextRequest
    """A chat request, or a raw text completion's."""
    started: float
    """Wall-clock time (Unix seconds)."""


@attrs.frozen(kw_only=True)
class ModelCallEnded:
    """A model call came back (`call`, as recorded) or failed (`error`, and `call` is None)."""

    trajectory_id: str
    call_id: str
    call: ModelCall | None
    error: str | None = None
    duration_s: float = 0.0


@attrs.frozen(kw_only=True)
class StepTaken:
    """A step-mode turn was recorded."""

    trajectory_id: str
    index: int
    """Its position in the trajectory's ``steps``."""
    step: Step


@attrs.frozen(kw_only=True)
class ToolCalled:
    """A tool call finished (answered, failed, or found never answered at the episode's end)."""

    trajectory_id: str
    tool_call: ToolCall


Event = EpisodeStarted | EpisodeEnded | ModelCallStarted | ModelCallEnded | StepTaken | ToolCalled
"""Any of the six events."""


class Observer:
    """A base with every method a no-op: override the ones you need (any object with them will do)."""

    essential: ClassVar[bool] = False
    """True for an observer that is part of the record (the JSONL sink): see the module docstring."""

    def on_episode_started(self, event: EpisodeStarted) -> None:
        """An episode began."""

    def on_episode_ended(self, event: EpisodeEnded) -> None:
        """An episode is over; ``event.trajectory`` is its final record."""

    def on_model_call_started(self, event: ModelCallStarted) -> None:
        """A model call was sent."""

    def on_model_call_ended(self, event: ModelCallEnded) -> None:
        """A model call came back or failed."""

    def on_step(self, event: StepTaken) -> None:
        """A step-mode turn was recorded."""

    def on_tool_call(self, event: ToolCalled) -> None:
        """A tool call finished."""


METHODS = (
    "on_episode_started",
    "on_episode_ended",
    "on_model_call_started",
    "on_model_call_ended",
    "on_step",
    "on_tool_call",
)
"""Every method an observer may have."""

Subscribers = tuple[tuple[Callable[[Any], None], bool], ...]
"""The bound methods subscribed to one event, each with whether its observer is essential."""


class Observers:
    """The observers of one run, sorted by event: what the engine publishes to.

    Built once per run (never per episode); each attribute is the tuple of subscribers of one event,
    empty when nobody has that method, so the engine's ``if observers.step:`` is all that nobody
    observing costs.
    """

    __slots__ = (
        "episode_ended",
        "episode_started",
        "failures",
        "model_call_ended",
        "model_call_started",
        "step",
        "tool_call",
    )

    def __init__(self, observers: Iterable[Any] = ()) -> None:
        """Collect each observer's methods; an object with none of them is refused in one sentence."""
        self.episode_started = self.episode_ended = self.model_call_started = ()
        self.model_call_ended = self.step = self.tool_call = ()
        self.failures: dict[str, int] = {}
        """How many times each observer (by its repr) raised, over the run."""
        found: dict[str, list[tuple[Callable[[Any], None], bool]]] = {}
        for observer in observers:
            kind: type = type(observer)
            names = _methods_of(kind)
            if names is None:  # its class has none: the instance may carry them itself
                names = tuple(name for name in METHODS if callable(getattr(observer, name, None)))
                if not names:
                    msg = f"{observer!r} is not an observer: it has none of the methods {', '.join(METHODS)}."
                    raise UsageError(msg)
            essential = bool(getattr(observer, "essential", False))
            for name in names:
                found.setdefault(name, []).append((getattr(observer, name), essential))
        for name, subscribers in found.items():
            subscribers.sort(key=_not_essential)  # essential first: the record before the rest
            setattr(self, name[3:], tuple(subscribers))  # on_step -> step

    episode_started: Subscribers
    episode_ended: Subscribers
    model_call_started: Subscribers
    model_call_ended: Subscribers
    step: Subscribers
    tool_call: Subscribers

    def __bool__(self) -> bool:
        return any(getattr(self, name.removeprefix("on_")) for name in METHODS)

    def publish(self, subscribers: Subscribers, event: Event, *, stop_on_essential: bool = False) -> None:
        """Hand `event` to each of `subscribers`; an exception is reported, never lost with the episode.

        With `stop_on_essential` (the episode-ended event) an essential observer's exception is raised.
        """
        for fn, essential in subscribers:
            try:
                fn(event)
            except Exception:
                if essential and stop_on_essential:
                    raise
                self._report(fn, event)

    def _report(self, fn: Callable[[Any], None], event: Event) -> None:
        owner = getattr(fn, "__self__", fn)
        name = repr(owner)
        self.failures[name] = self.failures.get(name, 0) + 1
        what = f"{type(event).__name__} of episode {getattr(event, 'trajectory_id', '?')}"
        if self.failures[name] == 1:
            log.warning(
                "The observer %s raised on %s; the episode goes on and is recorded (later failures of this "
                "observer are counted, not logged again).",
                name,
                what,
                exc_info=True,
            )
        else:
            log.debug("The observer %s raised again, on %s.", name, what, exc_info=True)


def _not_essential(pair: tuple[Callable[[Any], None], bool]) -> bool:
    return not pair[1]


@functools.cache
def _methods_of(cls: type) -> tuple[str, ...] | None:
    """The observer methods a class defines, leaving out `Observer`'s no-ops (they are never called).

    None when the class has none and is no `Observer` (its instances may still carry some).
    Cached per class: a run's observers are sorted in about a microsecond each.
    """
    names = tuple(
        name
        for name in METHODS
        if callable(getattr(cls, name, None)) and getattr(cls, name) is not getattr(Observer, name)
    )
    return names if names or issubclass(cls, Observer) else None


NO_OBSERVERS = Observers()
"""The run nobody observes."""


def observers_of(observers: Iterable[Any] | Observers | None) -> Observers:
    """Accept a list of observers, an `Observers` already built, or None."""
    if observers is None:
        return NO_OBSERVERS
    if isinstance(observers, Observers):
        return observers
    if isinstance(observers, str | bytes) or not isinstance(observers, Iterable):
        msg = f"observers must be a list of observers, not {observers!r}; write observers=[{observers!r}]."
        raise UsageError(msg)
    return Observers(observers)
