"""The entry-point module: declares the learner `acme` without importing it, so discovery stays fast.

Keep it this small: nothing here may import the implementation (`nenyax_acme.learner`) or anything heavy.
"""

from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_learners() -> PluginSpec:
    """The learner `acme`."""
    return PluginSpec(
        kind="learner",
        name="acme",
        factory="nenyax_acme.learner:AcmeLearner",
        summary="remembers each task's best answer (a template to edit)",
    )
