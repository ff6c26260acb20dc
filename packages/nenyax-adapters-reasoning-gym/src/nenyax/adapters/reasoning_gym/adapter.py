"""The ``reasoning_gym`` adapter: every registered dataset, and composites of several."""

from __future__ import annotations

import inspect

from nenyax.adapters.reasoning_gym.environment import ReasoningGymEnvironment
from nenyax.adapters.reasoning_gym.options import parse_spec
from nenyax.core import AdapterCapabilities, EnvURI, Listing, LoadContext
from reasoning_gym.factory import DATASETS


class ReasoningGymAdapter:
    """The ``reasoning_gym`` adapter: every registered dataset, and composites of several."""

    capabilities = AdapterCapabilities(listing=True)

    def load(self, uri: EnvURI, context: LoadContext | None = None) -> ReasoningGymEnvironment:
        """Build the environment for `uri`; a bad dataset, key or value is a `BadURIError`."""
        return ReasoningGymEnvironment(uri.raw, parse_spec(uri))

    def examples(self) -> list[str]:
        """URIs that load offline: a plain dataset, one with config (a list-valued key too), a composite."""
        return [
            "reasoning_gym:basic_arithmetic?size=20",
            'reasoning_gym:basic_arithmetic?size=20&operators=["+","-"]',
            "reasoning_gym:chain_sum?size=10&seed=7&min_terms=2&max_terms=3",
            "reasoning_gym:leg_counting,chain_sum?size=10&seed=3",
        ]

    @staticmethod
    def datasets() -> list[str]:
        """Every dataset name reasoning-gym registers (without the composite meta-dataset)."""
        return sorted(set(DATASETS) - {"composite"})

    def listing(self, where: str | None = None) -> list[Listing]:
        """Every dataset, described by the first line of its class's docstring; `where` filters names by substring."""
        found = []
        for name in self.datasets():
            if where and where.lower() not in name.lower():
                continue
            # The class's own docstring: an inherited one describes the base class, not this dataset.
            own = DATASETS[name][0].__dict__.get("__doc__")
            doc = inspect.cleandoc(own) if isinstance(own, str) else ""
            found.append(Listing(uri=f"reasoning_gym:{name}", description=doc.splitlines()[0] if doc else ""))
        return found
