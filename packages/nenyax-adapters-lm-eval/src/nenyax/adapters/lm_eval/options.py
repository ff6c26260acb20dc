"""What an ``lm_eval:`` URI names: a task (by name, or a YAML file), and how to run it."""

from __future__ import annotations

from pathlib import Path

import attrs

from nenyax.core import BadURIError, EnvURI

KEYS = ("num_fewshot", "include_path", "timeout")
"""The query keys the adapter reads; any other is refused (lm-eval tasks take no free arguments)."""


@attrs.frozen(kw_only=True)
class LmEvalSpec:
    """A parsed ``lm_eval:<task name or task YAML path>`` URI."""

    uri: str
    task: str
    """A task name (looked up in lm-eval's tasks and `include_path`), or a YAML file's path."""
    yaml_path: Path | None = None
    """The task's YAML file when the URI names one (then `task` is its path as given)."""
    num_fewshot: int | None = None
    """Few-shot examples per prompt (None: the task's own setting, else 0, as lm-eval does)."""
    include_path: Path | None = None
    """A folder of task YAML files to look names up in, besides lm-eval's own tasks."""
    timeout: float = 600.0
    """Seconds one model call may take."""


def _nonnegative_int(value: object, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BadURIError(f"'{key}' must be a non-negative integer, not {value!r}.")
    return value


def parse_spec(uri: EnvURI) -> LmEvalSpec:
    """Read the task and the query keys (``num_fewshot``, ``include_path``, ``timeout``)."""
    target = uri.target.strip()
    if not target:
        raise BadURIError("Name a task: 'lm_eval:<task name>' or 'lm_eval:<path/to/task.yaml>'.")
    unknown = sorted(set(uri.params) - set(KEYS))
    if unknown:
        raise BadURIError(f"{uri.raw!r} has unknown query keys {unknown}; the keys are {list(KEYS)}.")
    params = dict(uri.params)
    num_fewshot = params.get("num_fewshot")
    if num_fewshot is not None:
        num_fewshot = _nonnegative_int(num_fewshot, "num_fewshot")
    include = params.get("include_path")
    include_path = None
    if include is not None:
        include_path = Path(str(include)).expanduser()
        if not include_path.is_dir():
            raise BadURIError(f"include_path {str(include)!r} is not a folder.")
    timeout = params.get("timeout", 600.0)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise BadURIError(f"'timeout' must be a positive number of seconds, not {timeout!r}.")
    yaml_path = None
    if target.endswith((".yaml", ".yml")):
        yaml_path = Path(target).expanduser()
        if not yaml_path.is_file():
            raise BadURIError(f"The task file {target!r} does not exist.")
        yaml_path = yaml_path.resolve()
    return LmEvalSpec(
        uri=uri.raw,
        task=target,
        yaml_path=yaml_path,
        num_fewshot=num_fewshot,
        include_path=include_path.resolve() if include_path is not None else None,
        timeout=float(timeout),
    )
