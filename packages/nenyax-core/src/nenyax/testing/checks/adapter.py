"""The conformance checks of `adapter` plugins beyond the common ones (`nenyax.testing.checks.common`).

Each yields one sentence per problem found.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from typing import Any
from urllib.parse import quote, unquote

import attrs

from nenyax.core.contract import serde
from nenyax.core.contract.manifest import Manifest
from nenyax.core.contract.trajectory import Status, Tier, Trajectory
from nenyax.core.contract.uri import format_value, parse_uri, parse_value
from nenyax.core.engine.environment import Environment
from nenyax.core.engine.loader import load
from nenyax.core.errors import NenyaxError, UsageError
from nenyax.core.plugins.adapter import Listing
from nenyax.core.tiers.measure import check as check_env
from nenyax.testing.report import Check, Skip, Verdict
from nenyax.testing.subject import Subject


def _examples(subject: Subject) -> list[str]:
    return [str(e) for e in subject.instance().examples()]


def examples_use_its_scheme(subject: Subject) -> Iterator[str]:
    """The adapter gives at least one example, and every example is a URI of its own scheme."""
    examples = _examples(subject)
    if not examples:
        yield "examples() returned no URI; give at least one that loads offline."
    for uri in examples:
        if not uri.startswith(f"{subject.name}:"):
            yield f"Example {uri!r} does not start with '{subject.name}:'."


def examples_load(subject: Subject) -> Iterator[str]:
    """Each example loads into an Environment with a valid, stable manifest and task ids."""
    for uri in _examples(subject):
        try:
            env = load(uri, registry=subject.registry)
        except NenyaxError as exc:
            yield f"Example {uri!r} failed to load: {exc}"
            continue
        if not isinstance(env, Environment):
            yield f"Example {uri!r} loaded as {type(env).__name__}, not an Environment."
            continue
        with closing(env):
            manifest = env.manifest
            if manifest.uri != uri:
                yield f"Example {uri!r} has manifest uri {manifest.uri!r}."
            if serde.loads(serde.dumps(manifest), Manifest) != manifest:
                yield f"The manifest of {uri!r} does not survive a JSON round trip."
            with closing(load(uri, registry=subject.registry)) as again:
                if again.digest != env.digest:
                    yield f"Loading {uri!r} twice gave different manifest digests."
            if not env.task_ids(limit=3):
                yield f"Example {uri!r} lists no task ids."


def _other_spelling(value: Any) -> Any:
    """A list written as a tuple and a tuple as a list: the grammar's two spellings of a sequence."""
    if isinstance(value, list):
        return tuple(value)
    return list(value) if isinstance(value, tuple) else value


def _spellings(uri: str) -> tuple[str, str] | None:
    """`uri` and the same URI with each list-valued parameter spelled the other way, or None if it has none.

    Only those values are rewritten, as a user would type them (``("+","-")``); the rest stays as written.
    """
    parsed = parse_uri(uri)
    if not any(isinstance(v, list | tuple) for v in parsed.params.values()):
        return None
    head, _, query = uri.partition("?")
    fields = []
    for field in query.split("&"):
        key, _, text = field.partition("=")
        value = parse_value(unquote(text))
        if isinstance(value, list | tuple):
            text = quote(format_value(_other_spelling(value)), safe="[](),:{}/\"+-.*!~@'")
        fields.append(f"{key}={text}")
    return uri, f"{head}?{'&'.join(fields)}"


def list_values_survive(subject: Subject) -> Iterator[str]:
    """An example's list-valued parameter, as a list or a tuple, loads one environment whose manifest survives JSON."""
    pairs = [pair for pair in map(_spellings, _examples(subject)) if pair is not None]
    if not pairs:
        raise Skip(
            "no example sets a list-valued parameter; where the format takes one, add an example with it "
            '(written ["a","b"] or ("a","b"))'
        )
    for pair in pairs:
        manifests = []
        for uri in pair:
            try:
                with closing(load(uri, registry=subject.registry)) as env:
                    manifest = env.manifest
            except NenyaxError as exc:
                yield f"{uri!r} failed to load: {exc}"
                continue
            if manifest.uri != uri:
                yield f"{uri!r} has manifest uri {manifest.uri!r}."
            if serde.loads(serde.dumps(manifest), Manifest) != manifest:
                yield f"The manifest of {uri!r} does not survive a JSON round trip."
            manifests.append(attrs.evolve(manifest, uri=pair[0]))
        if len(manifests) == len(pair) and manifests[0] != manifests[1]:
            yield f"{pair[0]!r} and {pair[1]!r} spell one list two ways but load different manifests."


def bad_uri_is_clear(subject: Subject) -> Iterator[str]:
    """A URI naming nothing raises a one-sentence usage error, not an arbitrary exception."""
    uri = f"{subject.name}:__nenyax_no_such_environment__"
    try:
        load(uri, registry=subject.registry)
    except UsageError as exc:
        text = str(exc)
        if not text or "\n" in text or not text.rstrip().endswith((".", "?", ")")):
            yield f"The error for {uri!r} is not one sentence: {text!r}."
        return
    except Exception as exc:  # noqa: BLE001 - anything but a UsageError is the finding
        yield f"Loading {uri!r} raised {type(exc).__name__} ({exc}); raise nenyax.core.BadURIError instead."
        return
    yield f"Loading {uri!r} succeeded; an unknown name must raise nenyax.core.BadURIError."


def _claimed_tier(env: Environment) -> Tier:
    caps = env.manifest.capabilities
    if caps.reference_policy and caps.null_policy:
        return Tier.AUDITED
    if caps.seeded or caps.stable_task_ids:
        return Tier.TRAINABLE
    return Tier.EVALUABLE


def examples_reach_claimed_tier(subject: Subject) -> Iterator[str]:
    """`nenyax check` on each example reaches the tier its capabilities claim."""
    for uri in _examples(subject):
        with closing(load(uri, registry=subject.registry)) as env:
            claimed = _claimed_tier(env)
        report = check_env(uri, samples=3, registry=subject.registry)
        if report.tier < claimed:
            blocking = [r for r in report.results if r.outcome is not Verdict.PASSED]
            why = "; ".join(f"{r.id} {r.outcome.value}: {r.evidence}" for r in blocking[:2])
            yield f"{uri!r} claims {claimed.label} but reached {report.tier.label} ({why})."


def trajectory_roundtrip(subject: Subject) -> Iterator[str]:
    """A judged trajectory of each example survives JSON unchanged and records where it came from."""
    for uri in _examples(subject):
        with closing(load(uri, registry=subject.registry)) as env:
            caps = env.manifest.capabilities
            policy = "null" if caps.null_policy else "random" if caps.random_policy else "reference"
            traj = env.rollout(policy)
            digest = env.digest
        if traj.status is not Status.OK or traj.judgment is None:
            yield f"A {policy} episode of {uri!r} ended {traj.status.value}: {traj.error}"
            continue
        if serde.loads(serde.dumps(traj), Trajectory) != traj:
            yield f"A trajectory of {uri!r} does not survive a JSON round trip (are observations JSON-native?)."
        if traj.env_uri != uri or traj.manifest_digest != digest:
            yield f"A trajectory of {uri!r} does not record its environment URI and manifest digest."


def listing_is_loadable(subject: Subject) -> Iterator[str]:
    """An adapter declaring ``listing`` lists URIs of its own scheme, and the first one not marked unavailable loads."""
    listed = list(subject.instance().listing())
    bad = [item for item in listed if not isinstance(item, Listing)]
    if bad:
        yield f"listing() returned {type(bad[0]).__name__}, not nenyax.core.Listing."
        return
    for item in listed:
        if not item.uri.startswith(f"{subject.name}:"):
            yield f"Listed {item.uri!r} does not start with '{subject.name}:'."
    loadable = [item for item in listed if item.unavailable is None]  # a marked entry says it cannot
    if loadable and loadable[0].uri.startswith(f"{subject.name}:"):
        try:
            with closing(load(loadable[0].uri, registry=subject.registry)):
                pass
        except NenyaxError as exc:
            yield f"The first listed environment, {loadable[0].uri!r}, does not load: {exc}"


ADAPTER_CHECKS: tuple[Check, ...] = (
    Check(id="adapter/examples-use-its-scheme", summary="examples are URIs of its scheme", run=examples_use_its_scheme),
    Check(id="adapter/examples-load", summary="examples load with valid manifests", run=examples_load),
    Check(
        id="adapter/list-values-survive",
        summary="a list parameter loads the same as a list or a tuple",
        run=list_values_survive,
    ),
    Check(id="adapter/bad-uri-is-clear", summary="bad URIs raise one clear sentence", run=bad_uri_is_clear),
    Check(
        id="adapter/examples-reach-claimed-tier",
        summary="examples reach the tier their capabilities claim",
        run=examples_reach_claimed_tier,
    ),
    Check(
        id="adapter/trajectory-roundtrip",
        summary="trajectories round-trip and record their origin",
        run=trajectory_roundtrip,
    ),
    Check(
        id="adapter/listing-is-loadable",
        summary="what it lists loads",
        run=listing_is_loadable,
        requires=("listing",),
    ),
)
"""The adapter kind's own checks, in the order they run (after `common_checks("adapter")`)."""
