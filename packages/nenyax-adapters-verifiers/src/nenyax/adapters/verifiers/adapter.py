"""The ``verifiers`` adapter: loads ``verifiers:<env id>`` or ``verifiers:<module>:<attr>`` with whichever API fits."""

from __future__ import annotations

from typing import Any

from nenyax.core import EnvURI, LoadContext

EXAMPLE = "verifiers:nenyax.adapters.verifiers.demo:load_environment"
"""An environment shipped here, built offline with whichever API the installed verifiers offers."""


class VerifiersAdapter:
    """The ``verifiers`` adapter: legacy `Environment`s (verifiers 0.3) and v1 `Taskset`s (0.3 and 0.4)."""

    def __init__(self, examples: tuple[str, ...] | list[str] = (EXAMPLE,)) -> None:
        """`examples` are URIs that load offline (the default is the demo shipped with this adapter)."""
        self._examples = [str(e) for e in examples]

    def load(self, uri: EnvURI, context: LoadContext | None = None) -> Any:
        """Import what the URI names, tell the API from the object, and wrap it."""
        from nenyax.adapters.verifiers.library import installed
        from nenyax.adapters.verifiers.options import parse_spec
        from nenyax.adapters.verifiers.resolve import resolve

        spec = parse_spec(uri)
        library = installed()
        _quiet_datasets()
        resolved = resolve(spec, library)
        if resolved.api == "legacy":
            from nenyax.adapters.verifiers.legacy import LegacyVerifiersEnvironment

            return LegacyVerifiersEnvironment(spec, library, resolved.env)
        from nenyax.adapters.verifiers.v1 import V1VerifiersEnvironment

        return V1VerifiersEnvironment(spec, library, resolved)

    def examples(self) -> list[str]:
        """URIs that load offline: by default the small arithmetic demo shipped with this adapter."""
        return list(self._examples)


def _quiet_datasets() -> None:
    """No ``Map: 100%`` bars from `datasets` (which legacy environments build their rows with) interleaved
    with nenyax's own output."""
    try:
        import datasets
    except ImportError:  # v1 tasksets need no datasets
        return
    datasets.disable_progress_bars()
