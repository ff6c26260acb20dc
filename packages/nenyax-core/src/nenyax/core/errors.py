"""One error hierarchy for everything Nenyax raises on purpose.

A `NenyaxError` is a user-facing failure: its message is a full sentence saying what went wrong
and what to do. The CLI prints it without a traceback and exits with `exit_code`.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class NenyaxError(Exception):
    """Base class of every error Nenyax raises deliberately."""

    exit_code = 1


class UsageError(NenyaxError):
    """The user asked for something that cannot work (bad URI, unknown name, bad option)."""

    exit_code = 2


class BadURIError(UsageError):
    """An environment URI is malformed or names something that does not exist."""


class UnknownPluginError(UsageError, LookupError):
    """No installed plugin of the asked kind has that name."""


class DuplicatePluginError(NenyaxError):
    """Two installed distributions declare a plugin of the same kind and name."""


class PluginLoadError(NenyaxError):
    """A plugin's entry point or factory failed to import."""


class ManifestError(NenyaxError):
    """A manifest or plugin declaration is invalid."""


class EnvironmentFailure(NenyaxError):
    """The environment itself failed (reset, step or close raised)."""


class VerifierFailure(NenyaxError):
    """The environment's verifier failed while judging an episode."""


class PolicyFailure(NenyaxError):
    """The policy failed to produce an action (raised, or gave text that cannot be parsed)."""


class RetryablePolicyFailure(PolicyFailure):
    """The policy's reply could not be used, but the session will take another one.

    The step loop records the turn (no action, the error in its info) and asks the policy again; the
    session's next `render()` carries the error as feedback. A session bounds its own retries and
    raises a plain `PolicyFailure` once they are spent.
    """


class InfraFailure(NenyaxError):
    """Infrastructure failed (network, model server, sandbox): never the policy's fault."""


class RequestRefused(InfraFailure):
    """A model request asked for what its provider cannot honour (a field, a value): the caller is told
    in one sentence (the recording proxy answers HTTP 400 to a native loop), and nothing is silently dropped.

    An `InfraFailure` where Nenyax itself made the request (a step-mode turn): whatever it was, it is
    never the policy's fault, so never scored 0.
    """


class EpisodeInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped an episode; `trajectory` holds what it had recorded (status ``interrupted``).

    A `KeyboardInterrupt`, so code that does not know it still stops; the CLI writes the trajectory first.
    """

    def __init__(self, trajectory: object) -> None:
        super().__init__("The episode was interrupted.")
        self.trajectory = trajectory


class UnsupportedPolicyError(UsageError):
    """The environment cannot serve that built-in policy (e.g. no reference exists)."""


class CannotTravelError(UsageError):
    """An environment or policy cannot be rebuilt in another process (a lambda, an in-memory object)."""


class WorkerLostError(NenyaxError):
    """A worker process of an executor died before its run was over (its unfinished episodes are said)."""


def with_article(word: str) -> str:
    """``an int``, ``a str``, ``an ndarray``: the article a type name takes, by how it is read aloud."""
    vowel_sound = word[:1].lower() in "aeio" or word.lower().startswith(("nd", "np"))
    return f"{'an' if vowel_sound else 'a'} {word}"


def plural(word: str) -> str:
    """``policies``, ``formats``: the plural of a noun in these messages."""
    if word.endswith("y") and word[-2:-1] not in ("a", "e", "o", "u"):
        return word[:-1] + "ies"
    return word + ("es" if word.endswith(("s", "x", "ch", "sh")) else "s")


def did_you_mean_pool(word: str, choices: Iterable[str]) -> list[str]:
    """The (at most three) `choices` closest to `word`, ignoring case: 'CartPole' finds 'cartpole'."""
    by_lower: dict[str, str] = {}
    for choice in sorted(set(choices)):
        by_lower.setdefault(choice.lower(), choice)
    if word.lower() in by_lower and by_lower[word.lower()] != word:
        return [by_lower[word.lower()]]
    return [by_lower[c] for c in difflib.get_close_matches(word.lower(), list(by_lower), n=3, cutoff=0.6)]


def did_you_mean(word: str, choices: Iterable[str], what: str | None = None) -> str:
    """Return a sentence suffix suggesting the closest of `choices` to `word`, or listing a few.

    With no `what`, only a close match is named (an empty string when there is none): for a pool too
    large or too private to list.
    """
    pool = sorted(set(choices))
    close = did_you_mean_pool(word, pool)
    if close:
        return f" Did you mean {' or '.join(repr(c) for c in close)}?"
    if what is None:
        return ""
    if not pool:
        return f" No {what} is installed."
    shown = ", ".join(pool[:8]) + (", ..." if len(pool) > 8 else "")
    return f" Known {plural(what)}: {shown}."
