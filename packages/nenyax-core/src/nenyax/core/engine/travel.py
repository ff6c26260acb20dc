"""What can be played in another process: an environment as its `EnvironmentSpec`, a policy as a `PolicyTicket`.

A policy travels as plain data, never as a pickled object it does not own: a built-in by its name, an `Endpoint` by its
config (the API key by its variable's name), a function by the name it is imported by, and a function of
``__main__`` (a notebook, ``python -``, ``python -c``) by value, pickled with cloudpickle. Anything else (a
lambda, a closure, a policy object that lives in this process, such as a learner's) cannot be rebuilt in
another process, and saying so before any episode starts is the point of this module.
"""

from __future__ import annotations

import pickle
from typing import TYPE_CHECKING, Any

import attrs

from nenyax.core.contract.failures import describe
from nenyax.core.engine.policies import BUILTIN_POLICIES, NEVER_SUSPEND, CallablePolicy, Policy, as_policy
from nenyax.core.errors import CannotTravelError, UsageError, with_article
from nenyax.core.models.endpoint import Endpoint
from nenyax.core.plugins.registry import from_portable, import_factory

if TYPE_CHECKING:
    from nenyax.core.engine.environment import Environment
    from nenyax.core.engine.loader import EnvironmentSpec


def _plugins(value: Any) -> tuple[tuple[str, str], ...] | None:
    return None if value is None else tuple((str(name), str(ref)) for name, ref in value)


_ELSEWHERE = "or play it in this process (the default asyncio backend)"


def environment_spec(env: Environment) -> EnvironmentSpec:
    """``env.source``, or one `CannotTravelError` sentence saying why `env` cannot be rebuilt elsewhere."""
    if env.source is not None:
        return env.source
    if env.source_problem is not None:
        why = env.source_problem
    else:
        why = "it was built directly, not by nenyax.core.load(), so nothing says how to rebuild it"
    msg = f"The environment {env.uri} cannot be rebuilt in another process: {why}; load it by its URI, {_ELSEWHERE}."
    raise CannotTravelError(msg)


@attrs.frozen(kw_only=True)
class PolicyTicket:
    """A policy as plain data (it pickles; JSON-able but for `by_value`): `build()` makes it again, in any process."""

    kind: str
    """``builtin``, ``endpoint`` or ``function``."""
    name: str = ""
    """The built-in's name, or the function's ``module:qualname``."""
    endpoint: dict[str, Any] | None = attrs.field(default=None, hash=False)
    """`Endpoint.config()` (kind ``endpoint``): never the key's value, only its variable's name."""
    plugins: tuple[tuple[str, str], ...] | None = attrs.field(default=None, converter=_plugins)
    """`Registry.portable_sources()` of an Endpoint's own registry (None: the installed providers)."""
    speaks_text: bool = False
    """A function's `CallablePolicy.speaks_text`."""
    label: str | None = None
    """A function's `CallablePolicy.name` (what trajectories record)."""
    by_value: bytes | None = attrs.field(default=None, repr=False)
    """A function of ``__main__`` (a notebook, ``python -``, ``python -c``, a script), pickled by value with
    cloudpickle, as Ray sends one: another process cannot import ``__main__`` by name."""

    def build(self) -> Policy:
        """The policy this ticket describes, made in this process."""
        if self.kind == "builtin":
            return as_policy(self.name)
        if self.kind == "endpoint":
            registry = None if self.plugins is None else from_portable(list(self.plugins))
            # An Endpoint is a Policy whose `info` is a property (the Protocol declares a plain attribute).
            return Endpoint.from_config(dict(self.endpoint or {}), registry=registry)  # type: ignore[return-value]
        if self.by_value is not None:
            import cloudpickle

            fn = cloudpickle.loads(self.by_value)
        else:
            fn = import_factory(self.name)
        return CallablePolicy(fn, speaks_text=self.speaks_text, name=self.label)


def policy_ticket(policy: Any) -> PolicyTicket:
    """The travel form of `policy` (as `run_jobs` takes it), or one `CannotTravelError` sentence naming it."""
    if isinstance(policy, str) and policy in BUILTIN_POLICIES:
        return PolicyTicket(kind="builtin", name=policy)
    if type(policy) in NEVER_SUSPEND:
        return PolicyTicket(kind="builtin", name=policy.info.name)
    if isinstance(policy, Endpoint):
        registry = policy.registry
        try:
            plugins = None if registry is None else registry.portable_sources()
        except (pickle.PicklingError, TypeError, AttributeError) as exc:  # a provider object that does not pickle
            msg = f"The policy {policy!r} uses a provider object that cannot be pickled ({exc}); {_ELSEWHERE}."
            raise CannotTravelError(msg) from exc
        try:
            config = policy.config()
        except UsageError as exc:  # its key was given by value: the secret must not travel
            raise CannotTravelError(str(exc)) from exc
        return PolicyTicket(kind="endpoint", endpoint=config, plugins=plugins)
    if isinstance(policy, CallablePolicy):
        return _function_ticket(policy.fn, policy.speaks_text, policy.name)
    if hasattr(policy, "act") and hasattr(policy, "info"):
        name = getattr(policy.info, "name", "") or type(policy).__name__
        msg = (
            f"The policy {name!r} is {with_article(type(policy).__name__)} object that lives in this process and "
            "cannot travel to another one; pass a built-in policy name, an Endpoint or a module-level function, "
            f"{_ELSEWHERE}."
        )
        raise CannotTravelError(msg)
    if callable(policy):
        return _function_ticket(policy, False, None)
    return policy_ticket(as_policy(policy))  # not a policy at all: as_policy says so in its sentence


def _function_ticket(fn: Any, speaks_text: bool, label: str | None) -> PolicyTicket:
    module = getattr(fn, "__module__", None) or ""
    qualname = getattr(fn, "__qualname__", None) or ""
    shown = f"{module}:{qualname}" if module and qualname else repr(fn)
    why = _why_not_importable(fn, module, qualname)
    if why is None and module == "__main__":
        return PolicyTicket(
            kind="function", name=f"{module}:{qualname}", speaks_text=speaks_text, label=label, by_value=_pickled(fn)
        )
    if why is not None:
        msg = (
            f"The policy {shown} cannot travel to another process: {why}; define it as a module-level function "
            f"(another process imports it by name), {_ELSEWHERE}."
        )
        raise CannotTravelError(msg)
    return PolicyTicket(kind="function", name=f"{module}:{qualname}", speaks_text=speaks_text, label=label)


def _why_not_importable(fn: Any, module: str, qualname: str) -> str | None:
    """Why another process could not import `fn` by its name (None: it can)."""
    if "<lambda>" in qualname:
        return "it is a lambda"
    if "<locals>" in qualname:
        return "it is defined inside a function (a closure)"
    if not module or not qualname:
        return f"it is {with_article(type(fn).__name__)} object, not a function"
    if module == "__main__":
        return None  # it travels by value (`_pickled`): another process has no such __main__ to import it from
    try:
        found = import_factory(f"{module}:{qualname}")
    except (ImportError, AttributeError, ValueError):  # what stops the lookup here stops it there
        found = None
    if found is not fn:
        return f"{module}:{qualname} does not name it (a bound method or a callable object is not importable by name)"
    return None


def _pickled(fn: Any) -> bytes:
    """`fn` pickled by value (cloudpickle), or one `CannotTravelError` sentence saying what does not pickle."""
    import cloudpickle

    try:
        return bytes(cloudpickle.dumps(fn))
    except Exception as exc:
        msg = (
            f"The policy __main__:{fn.__qualname__} cannot travel to another process: it holds something that "
            f"cannot be pickled ({describe(exc).rstrip('.')}); {_ELSEWHERE}."
        )
        raise CannotTravelError(msg) from exc
