"""The reference reply: the document's gold target, in a form the task's own filters read back.

A ``generate_until`` task scores its reply after a filter pipeline (a regex such as ``#### (\\d+)``,
``take_first``...), so the plain gold text is not always what scores. The candidates below are tried
in order, each cut at the task's ``until`` strings and run through the task's first filter pipeline
and ``process_results``; the first that earns the best primary metric is the reply. A
``multiple_choice`` task's reference names the gold choice (see `model`: a non-model policy picks a
choice by naming it).
"""

from __future__ import annotations

from typing import Any

from nenyax.adapters.lm_eval.model import cut
from nenyax.adapters.lm_eval.tasks import LoadedTask


def gold(loaded: LoadedTask, doc: dict[str, Any]) -> str | None:
    """The document's gold target as text (a choice's text for an index), or None when it has none."""
    task = loaded.task
    try:
        target = task.doc_to_target(doc)
        if isinstance(target, list):
            target = target[0] if target else None
        if isinstance(target, int) and not isinstance(target, bool) and task.config.doc_to_choice is not None:
            target = task.doc_to_choice(doc)[target]
    except Exception:  # noqa: BLE001 - a template that cannot render a target: this document has no gold
        return None
    if target is None or isinstance(target, bool):
        return None
    text = str(target).strip()
    return text or None


def _candidates(text: str) -> list[str]:
    return list(
        dict.fromkeys([text, f" {text}", f"\\boxed{{{text}}}", f"#### {text}", f"The answer is {text}.", f"({text})"])
    )


def _primary(loaded: LoadedTask, doc: dict[str, Any], reply: str) -> float:
    """The primary metric the task gives `reply` (its first filter pipeline applied), -inf when it fails."""
    from nenyax.adapters.lm_eval.judgment import metric_names

    task = loaded.task
    until = (task.config.generation_kwargs or {}).get("until") or []
    resps: Any = [[cut(reply, [until] if isinstance(until, str) else list(until))]]
    try:
        pipelines = getattr(task, "_filters", [])
        if pipelines:
            for make in pipelines[0].filters:
                resps = list(make().apply(resps, [doc]))  # filters may return any iterable (take_first: a map)
        filtered = resps[0]
        scores = task.process_results(doc, [filtered])  # one request per document, as the evaluator passes
    except Exception:  # noqa: BLE001 - a candidate the task's filters or metric choke on just loses
        return float("-inf")
    names = metric_names(loaded)
    value = scores.get(names[0]) if names else next(iter(scores.values()), None)
    return float(value) if isinstance(value, int | float) else float("-inf")


def reply(loaded: LoadedTask, doc: dict[str, Any]) -> str | None:
    """What the reference answers for `doc` (None when the document has no gold target)."""
    text = gold(loaded, doc)
    if text is None or loaded.output_type == "multiple_choice":
        return text
    best, best_score = text, float("-inf")
    for candidate in _candidates(text):
        score = _primary(loaded, doc, candidate)
        if score > best_score:
            best, best_score = candidate, score
    return best
