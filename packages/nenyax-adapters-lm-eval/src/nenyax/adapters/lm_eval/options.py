"""What an ``lm_eval:`` URI names: a task (by name, or a YAML file), and how to run it."""

from __future__ import annotations

from pathlib import Path

import attrs

from nenyax.core import BadURIError, EnvURI
from nenyax.core.toolkit.options import Option, Options

OPTIONS = Options(
    "lm_eval",
    Option("num_fewshot", int, minimum=0, help="Few-shot examples per prompt (default: the task's own, else 0)."),
    Option("include_path", str, help="A folder of task YAML files to look task names up in."),
    Option("timeout", float, default=600.0, positive=True, help="Seconds one model call may take."),
)
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


def parse_spec(uri: EnvURI) -> LmEvalSpec:
    """Read the task and the query keys (``num_fewshot``, ``include_path``, ``timeout``)."""
    target = uri.target.strip()
    if not target:
        raise BadURIError("Name a task: 'lm_eval:<task name>' or 'lm_eval:<path/to/task.yaml>'.")
    read = OPTIONS.read(uri)
    include_path = None
    if read["include_path"] is not None:
        include_path = Path(read["include_path"]).expanduser()
        if not include_path.is_dir():
            raise BadURIError(f"include_path {read['include_path']!r} is not a folder.")
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
        num_fewshot=read["num_fewshot"],
        include_path=include_path.resolve() if include_path is not None else None,
        timeout=read["timeout"],
    )
