"""One lm-eval task as a rollout environment: an episode evaluates one document through lm-eval itself.

The episode runs lm-eval's evaluator (`lm_eval.evaluator.evaluate`) on the task with
``samples={task: [doc index]}``, the model being `model.lm_class` pointed at the episode's proxy route,
so prompts, few-shot examples, filters and metrics are all lm-eval's. Task ids are ``<task>/<doc index>``.
"""

from __future__ import annotations

import threading
from typing import Any

from nenyax.adapters.lm_eval import reference
from nenyax.adapters.lm_eval.client import ProxyClient
from nenyax.adapters.lm_eval.downloads import blocked
from nenyax.adapters.lm_eval.judgment import filter_names, judge, metric_names, no_choice
from nenyax.adapters.lm_eval.model import NoChoice, lm_class
from nenyax.adapters.lm_eval.options import LmEvalSpec
from nenyax.adapters.lm_eval.quiet import quiet
from nenyax.adapters.lm_eval.tasks import FEWSHOT_SEED, LoadedTask, digest_docs
from nenyax.core import (
    BadURIError,
    Capabilities,
    Manifest,
    Mode,
    NativeEpisode,
    NativeResult,
    NenyaxError,
    RolloutEnvironment,
    Split,
    Status,
    UnsupportedPolicyError,
)
from nenyax.core.errors import did_you_mean
from nenyax.core.toolkit.failures import describe

_ACTIONS = {
    "generate_until": "a completion of the prompt (a raw /completions call), cut at the task's stop strings",
    "multiple_choice": "a score for each choice's continuation (a model's prompt logprobs), or a reply naming a choice",
    "loglikelihood": "the continuation's logprob given the context (a model's prompt logprobs)",
    "loglikelihood_rolling": "the text's logprob (a model's prompt logprobs)",
}


class LmEvalEnvironment(RolloutEnvironment):
    """An lm-eval task whose documents are episodes, evaluated by lm-eval with Nenyax as the model."""

    def __init__(self, spec: LmEvalSpec, version: str, loaded: LoadedTask) -> None:
        self.spec, self.loaded = spec, loaded
        # lm-eval's task object keeps each evaluation's requests on itself: episodes take turns with it.
        self._lock = threading.Lock()
        self.golds = [reference.gold(loaded, doc) for doc in loaded.docs]
        has_gold = loaded.output_type in ("generate_until", "multiple_choice") and all(self.golds)
        cheap = loaded.output_type in ("generate_until", "multiple_choice")
        config = loaded.task.config
        extra: dict[str, Any] = {
            "task": loaded.name,
            "output_type": loaded.output_type,
            "source": loaded.source,
            "metrics": metric_names(loaded),
            "filters": filter_names(loaded),
            # The score is the primary metric as lm-eval reports it: for a perplexity, lower is better.
            "higher_is_better": {str(k): bool(v) for k, v in (loaded.task.higher_is_better() or {}).items()},
            "num_fewshot": loaded.task.get_config("num_fewshot"),
            "docs_sha256": digest_docs(loaded.docs),
        }
        if not has_gold:
            extra["no_reference"] = (
                "Loglikelihood tasks have no reply to give: only a model that scores text can play them."
                if not cheap
                else "Some documents have no gold target, so there is no reference policy."
            )
        if not cheap:
            extra["no_cheap_policy"] = "The null and random policies are no models: they cannot score text."
        description = str(getattr(config, "description", "") or "").strip().split("\n")[0]
        super().__init__(
            Manifest(
                uri=spec.uri,
                format="lm_eval",
                format_version=version,
                mode=Mode.ROLLOUT,
                name=loaded.name,
                description=description or f"lm-evaluation-harness task {loaded.name} ({loaded.output_type})",
                splits=(Split(name=loaded.split, count=len(loaded.docs)),),
                observation="the document's prompt as lm-eval renders it (few-shot examples first), as a raw prompt",
                action=_ACTIONS[loaded.output_type],
                extra=extra,
                capabilities=Capabilities(
                    stable_task_ids=True,
                    reference_policy=has_gold,
                    null_policy=cheap,
                    random_policy=cheap,
                    multi_turn=False,
                    max_turns=None,
                ),
            )
        )

    def task_ids(self, split: str | None = None, limit: int | None = None) -> list[str]:
        """``<task>/<doc index>`` for every evaluation document, in lm-eval's order."""
        if split is not None and split != self.loaded.split:
            raise BadURIError(f"{self.uri} has no split {split!r}; its documents are in {self.loaded.split!r}.")
        count = len(self.loaded.docs) if limit is None else min(limit, len(self.loaded.docs))
        return [f"{self.loaded.name}/{i}" for i in range(count)]

    def _index(self, task_id: str | None) -> int:
        if task_id is None:
            return 0
        name, _, index = task_id.rpartition("/")
        if name == self.loaded.name and index.isdigit() and int(index) < len(self.loaded.docs):
            return int(index)
        hint = did_you_mean(task_id, self.task_ids(limit=8), "task")
        raise BadURIError(f"{task_id!r} is not a task of {self.uri} (ids are '{self.loaded.name}/<index>').{hint}")

    def run(self, episode: NativeEpisode) -> NativeResult:  # synchronous, as lm-eval is: core runs it on a thread
        """Evaluate the episode's document with lm-eval's evaluator, the policy answering through the proxy."""
        from lm_eval import evaluator

        index = self._index(episode.task_id)
        client = ProxyClient(episode.base_url, episode.api_key, episode.model, self.spec.timeout)
        lm = lm_class()(
            client,
            scores=episode.scores_prompts,
            output_type=self.loaded.output_type,
            seed=episode.seed,
        )
        info: dict[str, Any] = {"doc_index": index}
        with self._lock, quiet():
            self.loaded.task.set_fewshot_seed(seed=FEWSHOT_SEED)  # the same few-shot examples in every run
            try:
                results = evaluator.evaluate(
                    lm=lm,
                    task_dict={self.loaded.name: self.loaded.task},
                    samples={self.loaded.name: [index]},
                    bootstrap_iters=0,
                    log_samples=True,
                    verbosity="ERROR",
                )
            except NoChoice as exc:
                info["reply"] = exc.reply
                said = ({"role": "user", "content": exc.context}, {"role": "assistant", "content": exc.reply})
                return NativeResult(judgment=no_choice(self.loaded, str(exc)), messages=said, info=info)
            except NenyaxError:
                raise  # a failed model call (infra_error) or a policy that cannot play this task
            except Exception as exc:  # lm-eval's own crash: the environment's failure, calls kept
                if (infra := blocked(exc, self.loaded.name)) is not None:
                    raise infra from exc  # a download the task's code could not make: never a score
                why = f"lm-eval failed evaluating {self.loaded.name}/{index}: {describe(exc)}"
                return NativeResult(judgment=None, status=Status.ENV_ERROR, error=why, info=info)
        if not isinstance(results, dict):
            return NativeResult(judgment=None, status=Status.ENV_ERROR, error="lm-eval returned no results.", info=info)
        sample = _sample(results, self.loaded.name)
        info.update(_sample_info(sample))
        return NativeResult(judgment=judge(self.loaded, results), messages=_messages(sample), info=info)

    def reference_reply(self, task_id: str | None, messages: list[dict[str, Any]]) -> str | dict[str, Any]:
        """The document's gold target (the gold choice's text for a multiple-choice task), as the filters read it."""
        if not self.manifest.capabilities.reference_policy:
            raise UnsupportedPolicyError(f"{self.uri} has no reference policy: {self.manifest.extra['no_reference']}")
        index = self._index(task_id)
        answer = reference.reply(self.loaded, self.loaded.docs[index])
        if answer is None:
            raise UnsupportedPolicyError(f"{task_id} has no gold target.")
        return answer


def _sample(results: dict[str, Any], name: str) -> dict[str, Any]:
    samples = (results.get("samples") or {}).get(name) or []
    return samples[0] if samples and isinstance(samples[0], dict) else {}


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, bool | int | str) or value is None:
        return value
    if isinstance(value, float):
        return value
    try:
        return float(value)  # numpy scalars
    except (TypeError, ValueError):
        return str(value)


def _sample_info(sample: dict[str, Any]) -> dict[str, Any]:
    """What lm-eval logged for the document: its target, raw and filtered replies (or loglikelihoods)."""
    keep = ("target", "resps", "filtered_resps", "filter", "doc_hash", "prompt_hash")
    return {key: _jsonable(sample[key]) for key in keep if key in sample}


def _messages(sample: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """The prompt and the answer: the reply (generation), or the best-scored continuation (loglikelihood)."""
    arguments = sample.get("arguments") or []
    if not arguments:
        return ()
    context = str(arguments[0][0])
    resps = sample.get("filtered_resps") or []
    second = arguments[0][1] if len(arguments[0]) > 1 else None
    if isinstance(second, dict):  # generation: (context, gen_kwargs)
        raw = (sample.get("resps") or [[""]])[0]
        answer = str(raw[0] if isinstance(raw, list) and raw else raw)
    else:  # loglikelihood: (context, continuation) per choice; the highest-scored one is the answer
        scores = [r[0] if isinstance(r, list | tuple) else r for r in resps]
        best = max(range(len(scores)), key=lambda i: float(scores[i])) if scores else 0
        answer = str(arguments[best][1]) if best < len(arguments) and len(arguments[best]) > 1 else ""
    return ({"role": "user", "content": context}, {"role": "assistant", "content": answer})
