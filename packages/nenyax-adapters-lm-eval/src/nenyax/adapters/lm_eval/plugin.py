"""Entry-point module: declares the adapter without importing lm-eval or the adapter itself."""

from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_adapters() -> PluginSpec:
    """The ``lm_eval`` URI scheme."""
    return PluginSpec(
        kind="adapter",
        name="lm_eval",
        factory="nenyax.adapters.lm_eval.adapter:LmEvalAdapter",
        summary="EleutherAI lm-evaluation-harness tasks, one document per episode, scored by the task's own metrics",
    )
