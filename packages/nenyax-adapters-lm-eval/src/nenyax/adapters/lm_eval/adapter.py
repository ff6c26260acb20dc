"""The ``lm_eval`` adapter: loads ``lm_eval:<task name>`` or ``lm_eval:<path/to/task.yaml>``."""

from __future__ import annotations

from typing import Any

from nenyax.core import EnvURI, LoadContext

EXAMPLES = ("lm_eval:nenyax_arith", "lm_eval:nenyax_capitals")
"""Tasks shipped with the adapter, their data beside them: they load offline."""


class LmEvalAdapter:
    """The ``lm_eval`` adapter: one lm-eval task per URI, one document per episode."""

    def __init__(self, examples: tuple[str, ...] | list[str] = EXAMPLES) -> None:
        """`examples` are URIs that load offline (by default the tasks shipped with this adapter)."""
        self._examples = [str(e) for e in examples]

    def load(self, uri: EnvURI, context: LoadContext | None = None) -> Any:
        """Parse the URI, build the task with lm-eval, and wrap it."""
        from nenyax.adapters.lm_eval.library import installed
        from nenyax.adapters.lm_eval.options import parse_spec

        spec = parse_spec(uri)
        version = installed()
        from nenyax.adapters.lm_eval.environment import LmEvalEnvironment
        from nenyax.adapters.lm_eval.quiet import quiet
        from nenyax.adapters.lm_eval.tasks import load_task

        with quiet():
            return LmEvalEnvironment(spec, version, load_task(spec))

    def examples(self) -> list[str]:
        """URIs that load offline: a generation task and a multiple-choice one shipped with this adapter."""
        return list(self._examples)
