"""Policies: anything that chooses actions, and the built-in ones (callable, reference, null, random)."""

from __future__ import annotations

import inspect
import random
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import attrs

from nenyax.core.contract.chat import ChatRequest
from nenyax.core.contract.trajectory import PolicyInfo
from nenyax.core.engine.session import Session
from nenyax.core.errors import UsageError, did_you_mean
from nenyax.core.models.recorder import EpisodeRecorder


@attrs.define(kw_only=True)
class Turn:
    """What a policy sees when asked for an action."""

    session: Session
    """The live session (native observation, text codec, built-in actions)."""
    observation: Any
    """The current native observation."""
    messages: list[dict[str, Any]]
    """The chat transcript so far, ending with the current observation (text policies only)."""
    index: int
    """How many actions were taken before this one."""
    rng_seed: str
    """What `rng` is seeded from: the task, the seed and the sample number of the episode."""
    _rng: random.Random | None = attrs.field(default=None, init=False, repr=False)
    """A generator seeded from the episode, for reproducible randomness."""
    recorder: EpisodeRecorder
    """The episode's record: a model policy makes each call through
    ``await turn.recorder.model_call(request, send)``, which records it in the trajectory and
    publishes it to the run's observers (`Endpoint.act` does)."""
    request: ChatRequest | None = None
    """Rollout and task mode: the whole model request the native loop sent (its tools and parameters
    too), which the policy answers; `session` is then None and `messages` the request's messages."""

    @property
    def rng(self) -> random.Random:
        """A generator seeded from the episode, for reproducible randomness (made on first use: seeding
        a `random.Random` from a string costs more than a whole one-step episode)."""
        if self._rng is None:
            self._rng = random.Random(self.rng_seed)
        return self._rng


@runtime_checkable
class Policy(Protocol):
    """Anything that chooses actions.

    A policy with ``speaks_text = True`` receives the chat transcript and returns the model's reply
    as text, which the session's text codec parses into an action; otherwise it returns a native
    action directly.
    """

    info: PolicyInfo
    speaks_text: bool

    async def act(self, turn: Turn) -> Any:
        """Return an action (or, for text policies, the reply text) for `turn`."""
        ...


@attrs.define
class CallablePolicy:
    """A plain (sync or async) function of the native observation."""

    fn: Callable[[Any], Any]
    speaks_text: bool = False
    name: str | None = None
    """What trajectories record as the policy's name (default ``module:qualname`` of `fn`)."""
    info: PolicyInfo = attrs.field(init=False)
    sync_fn: Callable[[Any], Any] | None = attrs.field(init=False)
    """`fn` when it is a plain function, so the rollout loop can call it without a coroutine."""

    def __attrs_post_init__(self) -> None:
        name = getattr(self.fn, "__qualname__", type(self.fn).__name__)
        module = getattr(self.fn, "__module__", "") or ""
        default = f"{module}:{name}" if module else name
        self.info = PolicyInfo(kind="callable", name=self.name or default)
        is_async = inspect.iscoroutinefunction(self.fn) or inspect.iscoroutinefunction(
            getattr(self.fn, "__call__", None)  # noqa: B004 - an object whose __call__ is async
        )
        self.sync_fn = None if is_async else self.fn

    async def act(self, turn: Turn) -> Any:
        """Call the function on the observation (awaiting it if it is async)."""
        result = self.fn(turn.observation)
        if inspect.isawaitable(result):
            result = await result
        return result


class ReferencePolicy:
    """The environment's oracle: plays the reference action."""

    info = PolicyInfo(kind="reference", name="reference")
    speaks_text = False

    async def act(self, turn: Turn) -> Any:
        """Return the session's reference action."""
        return turn.session.reference_action()


class NullPolicy:
    """Does nothing useful: an empty answer or a no-op; a verifier must score it low."""

    info = PolicyInfo(kind="null", name="null")
    speaks_text = False

    async def act(self, turn: Turn) -> Any:
        """Return the session's null action."""
        return turn.session.null_action()


class RandomPolicy:
    """A random valid action (garbage text for text environments), seeded per episode."""

    info = PolicyInfo(kind="random", name="random")
    speaks_text = False

    async def act(self, turn: Turn) -> Any:
        """Return the session's random action drawn from the episode's generator."""
        return turn.session.random_action(turn.rng)


NEVER_SUSPEND = (ReferencePolicy, NullPolicy, RandomPolicy)
"""Policies whose act() never suspends: it only calls the session's synchronous oracle methods."""

BUILTIN_POLICIES: dict[str, Callable[[], Policy]] = {
    "reference": ReferencePolicy,
    "null": NullPolicy,
    "random": RandomPolicy,
}

POLICY_ALIASES: dict[str, str] = {"oracle": "reference"}
"""Other names of built-in policies: ``oracle`` is what harbor and many benchmarks call the reference."""


def as_policy(policy: Any) -> Policy:
    """Accept a Policy, a built-in policy name, or a callable on native observations."""
    if isinstance(policy, str):
        policy = POLICY_ALIASES.get(policy, policy)
        if policy in BUILTIN_POLICIES:
            return BUILTIN_POLICIES[policy]()
        msg = f"Unknown built-in policy {policy!r}." + did_you_mean(policy, BUILTIN_POLICIES, "policy")
        raise UsageError(msg)
    # Duck-typed first: a runtime Protocol isinstance check is slow on the per-episode path.
    if hasattr(policy, "act") and hasattr(policy, "speaks_text") and hasattr(policy, "info"):
        return policy  # type: ignore[no-any-return]
    if callable(policy):
        return CallablePolicy(policy)
    msg = f"{policy!r} is not a policy: pass a callable, a Policy, or one of {', '.join(BUILTIN_POLICIES)}."
    raise UsageError(msg)
