"""The reward model and the group filter miles (and slime) read a Nenyax judgment with.

`reward` is the score the episode was judged (``--custom-rm-path``, per sample or, with ``--group-rm``, per
group). An episode that failed for infrastructure (``infra_error``, ``env_error``, ``verifier_error``,
``timeout``, ``interrupted``) has no score: miles' reward is a number, so such a sample gets a placeholder,
is marked ``remove_sample`` and ``FAILED``, and `keep_group` (``--dynamic-sampling-filter-path``) refuses its
whole group, so the placeholder never reaches a group baseline or an advantage. Without that filter the
placeholder would be trained on as a reward of 0: `reward` refuses to run, in one sentence, before the first
sample is scored.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from nenyax.core.errors import UsageError
from nenyax.trainers.miles.agent import METADATA_KEY

FILTER = "nenyax.trainers.miles.keep_group"
UNSCORED = 0.0
"""The number a sample without a score carries only because miles' reward is a number (see the module)."""


async def reward(args: Any, sample: Any, **_: Any) -> float | list[float]:
    """The judged score of `sample` (a list of them for ``--group-rm``'s list of samples)."""
    if args is not None and not getattr(args, "dynamic_sampling_filter_path", None):
        msg = (
            "Nenyax's reward needs miles to drop the groups of episodes that failed for infrastructure, which have "
            f"no score: pass --dynamic-sampling-filter-path {FILTER}."
        )
        raise UsageError(msg)
    if isinstance(sample, list):
        return [_score(one) for one in sample]
    return _score(sample)


def _score(sample: Any) -> float:
    verdict = judged(sample)
    if verdict["trainable"]:
        return float(verdict["score"])
    sample.remove_sample = True
    status = getattr(type(sample), "Status", None)
    if status is not None:
        sample.status = status.FAILED
    return UNSCORED


def judged(sample: Any) -> dict[str, Any]:
    """The judgment `run_agent` (or slime's `custom_generate`) left in the sample's metadata."""
    verdict = (getattr(sample, "metadata", None) or {}).get(METADATA_KEY)
    if not isinstance(verdict, dict):
        msg = (
            "A sample carries no Nenyax judgment in its metadata: score with nenyax.trainers.miles.reward only the "
            "samples nenyax.trainers.miles.run_agent (or slime's nenyax.trainers.miles.custom_generate) played."
        )
        raise UsageError(msg)
    return verdict


def keep_group(args: Any, samples: Sequence[Any], **_: Any) -> Any:
    """miles' dynamic sampling filter: keep a group only if every episode of it was judged (none failed for
    infrastructure). miles' own `DynamicFilterOutput` where it imports, else the bool it also accepts."""
    del args
    failed = [judged(sample)["status"] for sample in samples if not judged(sample)["trainable"]]
    keep, reason = not failed, (f"nenyax_{failed[0]}" if failed else None)
    output = _filter_output()
    return keep if output is None else output(keep=keep, reason=reason)


def _filter_output() -> Any:
    for module in ("miles.rollout.filter_hub.base_types", "slime.rollout.filter_hub.base_types"):
        try:
            return __import__(module, fromlist=["DynamicFilterOutput"]).DynamicFilterOutput
        except ImportError:
            continue
    return None
