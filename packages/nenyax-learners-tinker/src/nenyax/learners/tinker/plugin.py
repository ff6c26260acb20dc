"""Entry-point module: declares the learner without importing it (nor the tinker SDK)."""

from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_learners() -> PluginSpec:
    """The ``tinker`` learner."""
    return PluginSpec(
        kind="learner",
        name="tinker",
        factory="nenyax.learners.tinker.learner:TinkerLearner",
        summary="hosted LoRA on the Tinker service (importance_sampling, ppo, cispo or gspo), sampled from there too",
    )
