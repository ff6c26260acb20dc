"""URI options declared once: each key's type, bounds, default and help, read from a parsed `EnvURI`.

An adapter declares its query keys as `Option`s in one `Options` table (its ``options.py``) and reads
a URI with `Options.read`. Every mistake is one `BadURIError` sentence naming the key, the URI, what
the key takes and what it was given; an unknown key gets a did-you-mean. Keys under a declared
prefix (``judge.tolerance=0.1``, ``config.seed=3``) are handed over as they are, per prefix; keys
the adapter passes on elsewhere (an environment's own arguments) are kept with ``rest=True``.

    OPTIONS = Options(
        "acme",
        Option("max_turns", int, default=10, minimum=1, help="Actions allowed per episode."),
        Option("split", str, help="Which split the tasks come from (default: the first)."),
    )
    read = OPTIONS.read(uri)
    read["max_turns"]  # 10 unless the URI says otherwise
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator, Mapping
from typing import Any

import attrs

from nenyax.core.contract.uri import EnvURI
from nenyax.core.errors import BadURIError, UsageError, did_you_mean

_TYPES = (int, float, str, bool, dict, list)


@attrs.frozen
class Option:
    """One query key: what it takes, its default, and a line of help for the docs and the scaffold."""

    key: str
    kind: type
    """``int``, ``float`` (an int is taken too), ``str`` (a number is taken as its text), ``bool``,
    ``dict`` (a JSON object) or ``list`` (a JSON array or a tuple)."""
    default: Any = attrs.field(default=None, kw_only=True)
    """What `Options.read` gives when the URI does not set the key (None: not set)."""
    help: str = attrs.field(default="", kw_only=True)
    minimum: float | None = attrs.field(default=None, kw_only=True)
    """The smallest number taken (inclusive)."""
    maximum: float | None = attrs.field(default=None, kw_only=True)
    """The largest number taken (inclusive)."""
    positive: bool = attrs.field(default=False, kw_only=True)
    """Only numbers above zero (``timeout``: a positive number of seconds)."""
    choices: tuple[str, ...] | None = attrs.field(default=None, kw_only=True)
    """The only values a text option takes."""

    def __attrs_post_init__(self) -> None:
        """Refuse a declaration no value could satisfy (a mistake of the plugin author)."""
        if self.kind not in _TYPES:
            msg = f"Option {self.key!r} has kind {self.kind!r}; use one of int, float, str, bool, dict, list."
            raise TypeError(msg)

    def takes(self) -> str:
        """What the key takes, in the words an error message uses (``an integer of at least 1``)."""
        if self.choices is not None:
            return "one of " + ", ".join(self.choices)
        if self.kind in (int, float):
            noun = "an integer" if self.kind is int else "a number"
            if self.positive:
                noun = "a positive integer" if self.kind is int else "a positive number"
            low, high = _number(self.minimum), _number(self.maximum)
            if low is not None and high is not None:
                return f"{noun} from {low} to {high}"
            if low is not None:
                return f"{noun} of at least {low}"
            if high is not None:
                return f"{noun} of at most {high}"
            return noun
        return {str: "a non-empty text", bool: "true or false", dict: "a JSON object", list: "a JSON array"}[self.kind]

    def convert(self, value: Any) -> Any:
        """`value` as this option's type; ValueError when it is not one this option takes."""
        if self.kind is bool:
            if not isinstance(value, bool):
                raise ValueError(value)
            return value
        if self.kind in (int, float):
            number_types = (int,) if self.kind is int else (int, float)
            if isinstance(value, bool) or not isinstance(value, number_types):
                raise ValueError(value)
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(value)
            too_small = self.minimum is not None and value < self.minimum
            too_large = self.maximum is not None and value > self.maximum
            if too_small or too_large or (self.positive and value <= 0):
                raise ValueError(value)
            try:
                return self.kind(value)
            except OverflowError:  # an integer too large for a float
                raise ValueError(value) from None
        if self.kind is str:
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                raise ValueError(value)
            text = str(value)
            if not text.strip() or (self.choices is not None and text not in self.choices):
                raise ValueError(value)
            return text
        if self.kind is list and isinstance(value, tuple):
            return list(value)
        if not isinstance(value, self.kind):
            raise ValueError(value)
        return value


def _number(value: float | None) -> str | None:
    """A bound as written: ``9223372036854775807``, ``0.5``."""
    if value is None:
        return None
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


@attrs.frozen
class Read(Mapping[str, Any]):
    """What `Options.read` found: every declared key (its default where unset), and what it passed on."""

    chosen: dict[str, Any]
    """Every declared key's value: the URI's, else its default."""
    prefixed: dict[str, dict[str, Any]]
    """Per declared prefix, the keys under it without the prefix (``judge.tolerance`` -> ``tolerance``)."""
    rest: dict[str, Any]
    """Undeclared keys, kept where `Options.read` was asked to (``rest=True``)."""
    given: frozenset[str]
    """The declared keys the URI itself set."""

    def __getitem__(self, key: str) -> Any:
        """The value of the declared `key`."""
        return self.chosen[key]

    def __iter__(self) -> Iterator[str]:
        """The declared keys."""
        return iter(self.chosen)

    def __len__(self) -> int:
        """How many keys are declared."""
        return len(self.chosen)


class Options:
    """One plugin's table of query keys."""

    def __init__(
        self,
        owner: str,
        *options: Option,
        prefixes: tuple[str, ...] = (),
        kind: str = "adapter",
        error: type[UsageError] = BadURIError,
    ) -> None:
        """`owner` and `kind` name the plugin in messages (``The acme adapter has no option 'x'``).

        `error` is what a mistake raises: `BadURIError` for a URI's options, `UsageError` for a factory's.
        """
        self.owner = owner
        self.kind = kind
        self.error = error
        self.options = {option.key: option for option in options}
        if len(self.options) != len(options):
            msg = f"The {owner} options declare a key twice."
            raise TypeError(msg)
        self.prefixes = prefixes

    @property
    def keys(self) -> tuple[str, ...]:
        """The declared keys, in declaration order."""
        return tuple(self.options)

    def help(self) -> str:
        """One line per key: ``key (what it takes; default D): help``."""
        lines = []
        for option in self.options.values():
            default = "" if option.default is None else f"; default {option.default!r}"
            lines.append(f"{option.key} ({option.takes()}{default}): {option.help}".rstrip(": "))
        lines += [f"{prefix}.<key>: passed on as <key>" for prefix in self.prefixes]
        return "\n".join(lines)

    def read(self, uri: EnvURI, *, rest: bool = False, defaults: Mapping[str, Any] | None = None) -> Read:
        """The options `uri` sets, checked, with every other declared key at its default.

        `defaults` overrides declared defaults (a project's config, read before the URI).
        """
        return self.read_mapping(uri.params, where=f"in {uri.raw!r}", rest=rest, defaults=defaults)

    def check(self, **settings: Any) -> Read:
        """A factory's keyword settings, checked: ``The tinker learner's rank must be ..., got 0.``"""
        return self.read_mapping(settings, where=None)

    def read_mapping(
        self,
        params: Mapping[str, Any],
        *,
        where: str | None = "",
        rest: bool = False,
        defaults: Mapping[str, Any] | None = None,
    ) -> Read:
        """`read` for any mapping of key -> value; `where` places a key in messages (None: a factory's setting)."""
        given = {**dict(defaults or {}), **dict(params)}
        prefixed: dict[str, dict[str, Any]] = {prefix: {} for prefix in self.prefixes}
        kept: dict[str, Any] = {}
        values: dict[str, Any] = {}
        for key, value in given.items():
            head, dot, tail = key.partition(".")
            if dot and head in prefixed and tail:
                prefixed[head][tail] = value
            elif key in self.options:
                values[key] = self._checked(self.options[key], value, where)
            elif rest:
                kept[key] = value
            else:
                named = [*self.options, *(f"{prefix}.<key>" for prefix in self.prefixes)]
                msg = f"The {self.owner} {self.kind} has no option {key!r}." + did_you_mean(key, named, "option")
                raise self.error(msg)
        set_here = frozenset(values)
        ordered = {key: values.get(key, copy.deepcopy(option.default)) for key, option in self.options.items()}
        return Read(chosen=ordered, prefixed=prefixed, rest=kept, given=set_here)

    def _checked(self, option: Option, value: Any, where: str | None) -> Any:
        if value is None:
            return copy.deepcopy(option.default)
        try:
            return option.convert(value)
        except ValueError:
            if where is None:
                subject = f"The {self.owner} {self.kind}'s {option.key}"
            else:
                subject = f"{option.key} {where}" if where else option.key
            msg = f"{subject} must be {option.takes()}, got {value!r}."
            if option.choices is not None and isinstance(value, str):
                msg += did_you_mean(value, option.choices)
            raise self.error(msg) from None
