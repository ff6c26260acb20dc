"""Legacy verifiers environments (the 0.3 API: `Environment`, `SingleTurnEnv`, `MultiTurnEnv`, `ToolEnv`).

The environment's own `run_rollout` drives the episode: it calls the model through a verifiers
`ClientConfig` pointed at the episode's recording-proxy URL, then scores the rollout with its `Rubric`.
A task is one dataset row: ``eval/<example_id>`` (the eval dataset, which ``vf-eval`` runs) or
``train/<example_id>``.
"""

from __future__ import annotations

import os
from copy import deepcopy
from typing import Any

from nenyax.adapters.verifiers.library import Library
from nenyax.adapters.verifiers.options import VerifiersSpec
from nenyax.adapters.verifiers.records import KEY_VAR, digest_rows, error_text, jsonable, messages, numbers
from nenyax.adapters.verifiers.reference import fill, legacy_reply
from nenyax.core import (
    BadURIError,
    Capabilities,
    Judgment,
    Manifest,
    Mode,
    NativeEpisode,
    NativeResult,
    RolloutEnvironment,
    Split,
    Status,
    UnsupportedPolicyError,
    UsageError,
    VerifierFailure,
)
from nenyax.core.errors import did_you_mean
from nenyax.core.toolkit.failures import describe
from nenyax.core.toolkit.tasks import pick

_ROW_KEYS = ("prompt", "example_id", "answer", "info")
"""The `RolloutInput` fields a row carries (a string ``task`` column would be refused by verifiers)."""
_UNUSABLE_REPLY = ("EmptyModelResponseError", "InvalidModelResponseError")
"""Errors verifiers records when the model's reply was empty or malformed: the rubric still scores the
rollout (as ``vf-eval`` counts it), so the episode is judged, not failed: a silent policy scores what an
empty answer earns."""


_PLAIN_RUBRICS = {
    f"{package}.rubrics.{module}.{name}"
    for package in ("verifiers", "verifiers.legacy")
    for module, name in (("rubric", "Rubric"), ("rubric_group", "RubricGroup"))
}
"""Rubrics whose reward is exactly the weighted sum of their functions."""
_SCORING = ("score_rollout", "score_group")


def _plain(rubric: Any) -> bool:
    """The rubric scores as verifiers' own `Rubric` / `RubricGroup` does: it only adds functions (as
    `MultiTurnMonitorRubric` adds its metrics), and overrides no scoring method."""
    base = next((c for c in type(rubric).__mro__ if f"{c.__module__}.{c.__qualname__}" in _PLAIN_RUBRICS), None)
    return base is not None and all(getattr(type(rubric), m, None) is getattr(base, m, None) for m in _SCORING)


def rewardless(rubric: Any) -> bool:
    """The rubric can only ever give 0: plain rubrics (`_plain`) with no function of nonzero weight (metrics
    weigh 0). verifiers then reports a reward of 0.0, which is no verdict."""
    if not all(_plain(r) for r in (rubric, *(getattr(rubric, "rubrics", None) or ()))):
        return False
    try:
        weights = list(rubric._get_reward_weights())
    except Exception:  # noqa: BLE001 - a rubric that cannot list its weights is taken at its word
        return False
    return all(float(w) == 0.0 for w in weights)


def _rows(env: Any) -> dict[str, list[dict[str, Any]]]:
    """The environment's formatted datasets (prompt and example_id columns added), eval split first."""
    splits: dict[str, list[dict[str, Any]]] = {}
    try:
        if env.eval_dataset is not None or getattr(env, "eval_dataset_source", None) is not None:
            splits["eval"] = env.build_eval_dataset().to_list()
        if env.dataset is not None or getattr(env, "dataset_source", None) is not None:
            splits["train"] = env.build_dataset().to_list()
    except Exception as exc:
        raise UsageError(f"Building the environment's dataset failed: {describe(exc)}.") from exc
    return {name: rows for name, rows in splits.items() if rows}


def _error_name(error: Any) -> str:
    """The class name of an error verifiers recorded (it keeps the exception, or a dict of it after a server hop)."""
    if isinstance(error, BaseException):
        return type(error).__name__
    if isinstance(error, dict):
        return str(error.get("error", ""))
    return ""


def _feedback(output: dict[str, Any], threshold: float) -> str:
    said = f"stop condition {output.get('stop_condition')}; passed means reward >= {threshold:g}"
    error = output.get("error")
    return said if error is None else f"{said}; verifiers recorded {error_text(error)}"


class LegacyVerifiersEnvironment(RolloutEnvironment):
    """A legacy verifiers `Environment`, run by its own rollout loop against the recording proxy."""

    def __init__(self, spec: VerifiersSpec, library: Library, env: Any) -> None:
        self.spec = spec
        self.env = env
        self.splits = _rows(env)
        self.rewardless = rewardless(env.rubric)
        if not self.splits:
            raise BadURIError(f"{spec.uri} has no tasks: its datasets are empty.")
        self.rows: dict[str, dict[str, Any]] = {
            f"{split}/{row['example_id']}": row for split, rows in self.splits.items() for row in rows
        }
        answers = [row.get("answer") for row in self.rows.values()]
        has_reference = all(isinstance(a, str) and a.strip() for a in answers)
        max_turns = getattr(env, "max_turns", 1)
        tools = tuple(str(getattr(t, "name", t)) for t in (getattr(env, "tool_defs", None) or ()))
        name = env.env_id or spec.attr or spec.module
        why = "" if has_reference else "Some rows have no answer column value, so there is no reference policy."
        super().__init__(
            Manifest(
                uri=spec.uri,
                format="verifiers",
                format_version=library.version,
                mode=Mode.ROLLOUT,
                name=str(name),
                description=(type(env).__doc__ or "").strip().split("\n")[0],
                splits=tuple(Split(name=n, count=len(rows)) for n, rows in self.splits.items()),
                observation="chat messages: the dataset row's prompt (then the environment's replies)",
                action="an assistant message (text, or tool calls when the environment offers tools)",
                tools=tools,
                extra={
                    "api": "legacy",
                    "environment": f"{type(env).__module__}.{type(env).__qualname__}",
                    "rubric": type(env.rubric).__qualname__,
                    "pass_threshold": float(env.pass_threshold),
                    "rows_sha256": digest_rows(self.rows.values()),
                    "args": jsonable(spec.args),
                    **({"no_reference": why} if why else {}),
                },
                capabilities=Capabilities(
                    stable_task_ids=True,
                    reference_policy=has_reference,
                    multi_turn=max_turns != 1,
                    tools=bool(tools),
                    max_turns=max_turns if isinstance(max_turns, int) and max_turns > 0 else None,
                ),
            )
        )

    def task_ids(self, split: str | None = None, limit: int | None = None) -> list[str]:
        """``<split>/<example_id>`` of `split` (the eval split when the environment has one)."""
        name = split or next(iter(self.splits))
        if name not in self.splits:
            raise BadURIError(f"{self.uri} has no split {name!r}.{did_you_mean(name, self.splits, 'split')}")
        ids = [f"{name}/{row['example_id']}" for row in self.splits[name]]
        return ids if limit is None else ids[:limit]

    def _row(self, task_id: str | None) -> dict[str, Any]:
        key = task_id if task_id is not None else self.task_ids(limit=1)[0]
        return self.rows[pick(self.uri, key, self.rows)]

    def _client(self, episode: NativeEpisode) -> Any:
        from verifiers.legacy.types import ClientConfig

        os.environ[KEY_VAR] = episode.api_key
        # No client retries: a failing model call is the proxy's to classify, at once (the default is 10).
        return ClientConfig(
            api_base_url=episode.base_url, api_key_var=KEY_VAR, max_retries=0, timeout=self.spec.timeout
        )

    async def run(self, episode: NativeEpisode) -> NativeResult:
        """One `run_rollout` (or a group of one, for group rubrics) of the task's row, scored by the rubric."""
        row = self._row(episode.task_id)
        rollout_input = {k: deepcopy(row[k]) for k in _ROW_KEYS if k in row}
        rollout_input.setdefault("answer", "")
        sampling = deepcopy(self.env.sampling_args)
        client = self._client(episode)
        if getattr(self.env, "requires_group_rollouts", False):
            outputs = await self.env.run_group([rollout_input], client, episode.model, sampling)
            output = outputs[0]
        else:
            output = await self.env.run_rollout(rollout_input, client, episode.model, sampling)
        transcript = messages(output.get("prompt"), output.get("completion"))
        info = {
            "example_id": jsonable(output.get("example_id")),
            "stop_condition": jsonable(output.get("stop_condition")),
            "is_truncated": bool(output.get("is_truncated")),
        }
        error = output.get("error")
        if error is not None:
            info["error"] = error_text(error)
            if _error_name(error) not in _UNUSABLE_REPLY:
                why = f"The environment's rollout failed: {info['error']}"
                return NativeResult(judgment=None, status=Status.ENV_ERROR, error=why, messages=transcript, info=info)
        if self.rewardless:
            why = (
                f"No reward judged the episode: the rubric {type(self.env.rubric).__name__} has no reward function "
                "with a weight, so there is no score (verifiers would report 0)."
            )
            return NativeResult(judgment=None, status=Status.VERIFIER_ERROR, error=why, messages=transcript, info=info)
        return NativeResult(judgment=self._judgment(output), messages=transcript, info=info)

    def _judgment(self, output: dict[str, Any]) -> Judgment:
        reward = output.get("reward")
        if isinstance(reward, bool) or not isinstance(reward, int | float):
            raise VerifierFailure(f"The rubric gave no numeric reward (got {reward!r}).")
        try:
            score = float(reward)
            threshold = float(self.env.pass_threshold)
            return Judgment(
                score=score,
                # verifiers' own pass@k counts a rollout correct at reward >= pass_threshold.
                passed=score >= threshold,
                components=numbers(output.get("metrics")),
                feedback=_feedback(output, threshold),
                judge=f"verifiers:{type(self.env.rubric).__name__}",
            )
        except ValueError as exc:
            raise VerifierFailure(f"The rubric's reward {reward!r} is not a finite score.") from exc

    def reference_reply(self, task_id: str | None, messages: list[dict[str, Any]]) -> str | dict[str, Any]:
        """The row's answer, in the form the environment's parser reads back (plain, boxed, XML...)."""
        gold = self._row(task_id).get("answer")
        if not isinstance(gold, str) or not gold.strip():
            raise UnsupportedPolicyError(f"{self.uri} has no answer for {task_id}, so no reference policy.")
        if self.spec.reference is not None:
            return fill(self.spec.reference, gold)
        # The environment's parser, not the rubric's: SingleTurnEnv wraps the rubric in a RubricGroup whose
        # own parser is a plain default one, while the reward functions read with the environment's.
        return legacy_reply([self.env.parser], gold)
