"""Build one lm-eval task (by name or YAML file) and read its documents, offline where its data is local.

A YAML task's relative ``dataset_kwargs.data_files`` are taken relative to the YAML file (lm-eval itself
reads them relative to the working directory), so a task folder runs from anywhere. The tasks shipped
with this adapter (``shipped/``) are always on the include path.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import attrs
import orjson

from nenyax.adapters.lm_eval.downloads import blocked
from nenyax.adapters.lm_eval.options import LmEvalSpec
from nenyax.core import BadURIError, UsageError
from nenyax.core.errors import did_you_mean
from nenyax.core.toolkit.failures import describe

SHIPPED = Path(__file__).parent / "shipped"
"""Small tasks with their data beside them: the adapter's offline examples."""

OUTPUT_TYPES = ("generate_until", "multiple_choice", "loglikelihood", "loglikelihood_rolling")
LOCAL_BUILDERS = frozenset({"json", "csv", "parquet", "text", "arrow", "pandas"})
"""`datasets` builders that read local files (``dataset_path: json`` with ``data_files``)."""
FEWSHOT_SEED = 1234
"""lm-eval's default ``fewshot_random_seed``: reset before every episode, so a document's few-shot
examples do not depend on which documents ran before it (in this process or any other)."""


@attrs.frozen
class LoadedTask:
    """An lm-eval `ConfigurableTask` and what the adapter reads from it once."""

    name: str
    task: Any
    """The lm-eval task object (shared by episodes, which take turns with it)."""
    docs: tuple[dict[str, Any], ...]
    """The evaluation documents (the test split, else validation), in lm-eval's order."""
    split: str
    output_type: str
    source: str
    """Where the config came from: a YAML file's path, or ``python`` for a class-defined task."""


def _absolute(value: Any, base: Path) -> Any:
    """`value` (a path, or a list or dict of them) with relative paths that exist under `base` made absolute."""
    if isinstance(value, str):
        path = Path(value).expanduser()
        return str(base / path) if not path.is_absolute() and (base / path).exists() else value
    if isinstance(value, list):
        return [_absolute(v, base) for v in value]
    if isinstance(value, dict):
        return {k: _absolute(v, base) for k, v in value.items()}
    return value


def _from_yaml(path: Path) -> dict[str, Any]:
    """The YAML file's config (``include`` and ``!function`` resolved), data files made absolute."""
    from lm_eval.tasks._yaml_loader import load_yaml

    try:
        config: dict[str, Any] = load_yaml(path)
    except Exception as exc:
        if (infra := blocked(exc, path.stem)) is not None:
            raise infra from exc  # its `!function` code fetches data at import (nltk's, often)
        raise BadURIError(f"The task file {str(path)!r} could not be read: {describe(exc)}.") from exc
    if "task" not in config:
        what = "a group" if "group" in config else "no task"
        raise BadURIError(f"The file {str(path)!r} defines {what}: name a file with a 'task:' key.")
    kwargs = config.get("dataset_kwargs")
    if isinstance(kwargs, dict) and "data_files" in kwargs:
        config["dataset_kwargs"] = {**kwargs, "data_files": _absolute(kwargs["data_files"], path.parent)}
    return config


def _resolve(spec: LmEvalSpec) -> tuple[Any, str | dict[str, Any], str]:
    """The task manager, what to load with it, and where the config comes from."""
    from lm_eval.tasks import TaskManager
    from lm_eval.tasks._index import Kind

    if spec.yaml_path is not None:
        return TaskManager(include_defaults=False), _from_yaml(spec.yaml_path), str(spec.yaml_path)
    paths = [str(SHIPPED)] + ([str(spec.include_path)] if spec.include_path is not None else [])
    # Indexing lm-eval's own 228 task folders takes seconds: the shipped and included tasks are looked
    # up first, lm-eval's only when the name is not among them.
    manager = TaskManager(include_path=paths, include_defaults=False)
    entry = manager.task_index.get(spec.task)
    if entry is None:
        manager = TaskManager(include_path=paths)
        entry = manager.task_index.get(spec.task)
    if entry is None:
        hint = did_you_mean(spec.task, manager.all_subtasks, "task")
        raise BadURIError(f"{spec.task!r} is not an lm-eval task.{hint}")
    if entry.kind in (Kind.GROUP, Kind.TAG):
        kind = "group" if entry.kind is Kind.GROUP else "tag"
        raise BadURIError(f"{spec.task!r} is an lm-eval {kind}, not one task: name one of its tasks.")
    if entry.yaml_path is not None and entry.kind is Kind.TASK:
        return manager, _from_yaml(Path(entry.yaml_path)), str(entry.yaml_path)
    return manager, spec.task, "python"


def _set_fewshot(task: Any, num_fewshot: int | None) -> None:
    """Few-shot count as `simple_evaluate` sets it: the URI's, unless the task pins 0; else the task's, else 0."""
    default = task.get_config("num_fewshot")
    if num_fewshot is not None and default != 0:
        task.set_config(key="num_fewshot", value=num_fewshot)
    elif default is None:
        task.set_config(key="num_fewshot", value=0)
    task.set_fewshot_seed(seed=FEWSHOT_SEED)


def load_task(spec: LmEvalSpec) -> LoadedTask:
    """Build the task the URI names and read its evaluation documents (one sentence when that fails)."""
    manager, what, source = _resolve(spec)
    try:
        tasks = manager.load([what])["tasks"]
    except Exception as exc:
        why = describe(exc).rstrip(".")
        dataset = what.get("dataset_path") if isinstance(what, dict) else None
        if (infra := blocked(exc, spec.task, str(dataset) if dataset else None)) is not None:
            raise infra from exc
        remote = dataset is None or (dataset not in LOCAL_BUILDERS and not Path(str(dataset)).exists())
        hint = ""
        if remote or any(word in why for word in ("huggingface", "Hub", "HF_HUB_OFFLINE")):
            hint = " (its data comes from the HF Hub, which must be reachable: lm-eval's bundled tasks ship no data)"
        raise UsageError(f"lm-eval could not build the task {spec.task!r}{hint}: {why}.") from exc
    if len(tasks) != 1:
        raise BadURIError(f"{spec.task!r} builds {len(tasks)} tasks ({', '.join(sorted(tasks))}): name one.")
    name, task = next(iter(tasks.items()))
    output_type = str(task.OUTPUT_TYPE)
    if output_type not in OUTPUT_TYPES:
        raise BadURIError(f"The task {name!r} has output type {output_type!r}, which this adapter does not run.")
    _set_fewshot(task, spec.num_fewshot)
    if task.has_test_docs():
        split = str(task.config.test_split or "test")
    elif task.has_validation_docs():
        split = str(task.config.validation_split or "validation")
    else:
        raise BadURIError(f"The task {name!r} has neither test nor validation documents.")
    docs = tuple(dict(doc) for doc in task.eval_docs)
    if not docs:
        raise BadURIError(f"The task {name!r} has no documents in its {split!r} split.")
    return LoadedTask(name=str(name), task=task, docs=docs, split=split, output_type=output_type, source=source)


def digest_docs(docs: tuple[dict[str, Any], ...]) -> str:
    """A sha256 over the documents, the same in every process (it goes into the manifest digest)."""
    sha = hashlib.sha256()
    for doc in docs:
        sha.update(orjson.dumps(doc, option=orjson.OPT_SORT_KEYS, default=str))
    return sha.hexdigest()
