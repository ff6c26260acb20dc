"""Entry-point module: declares the learners without importing torch."""

from nenyax.core.hookspecs import PluginSpec, hookimpl

SUMMARIES = {
    "grpo": "GRPO: group-normalised advantages, clipped token ratios, per-sequence mean",
    "dapo": "DAPO: GRPO with clip-higher (0.2/0.28) and a token mean over the whole batch",
    "gspo": "GSPO: GRPO with sequence-level importance ratios",
    "rloo": "RLOO: leave-one-out baselines, clipped sequence ratios",
    "rft": "rejection-sampling fine-tuning: supervised loss on the best member of each group",
    "dpo": "DPO (sigmoid): the best against the worst member of each group",
}


@hookimpl
def nenyax_register_learners() -> list[PluginSpec]:
    """The torch learners, one name per preset of `TorchLearner`."""
    return [
        PluginSpec(
            kind="learner",
            name=name,
            factory=f"nenyax.learners.torch.learner:{name.upper()}",
            summary=f"{summary} (torch, local open model)",
        )
        for name, summary in SUMMARIES.items()
    ]
