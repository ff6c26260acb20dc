"""Entry-point module: declares the ``hf`` adapter and the judges, importing no datasets, sympy or math-verify."""

from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_adapters() -> PluginSpec:
    """The ``hf`` URI scheme."""
    return PluginSpec(
        kind="adapter",
        name="hf",
        factory="nenyax.adapters.datasets.adapter:DatasetsAdapter",
        summary="local question/answer datasets loaded with Hugging Face datasets, judged by a named judge",
    )


@hookimpl
def nenyax_register_judges() -> list[PluginSpec]:
    """Answer judges, chosen by name with ``?judge=``."""
    return [
        PluginSpec(
            kind="judge",
            name="exact",
            factory="nenyax.adapters.datasets.judges:ExactJudge",
            summary="exact match after normalising case, whitespace and punctuation",
        ),
        PluginSpec(
            kind="judge",
            name="numeric",
            factory="nenyax.adapters.datasets.judges:NumericJudge",
            summary="numbers equal within a tolerance (fractions, LaTeX, percents as hundredths, commas and units)",
        ),
        PluginSpec(
            kind="judge",
            name="choice",
            factory="nenyax.adapters.datasets.choice:ChoiceJudge",
            summary="multiple choice: the label a reply chooses (B, (B), B) Jupiter, or an option's text)",
        ),
        PluginSpec(
            kind="judge",
            name="math",
            factory="nenyax.adapters.datasets.mathjudge:MathJudge",
            summary="mathematical equivalence by math-verify (LaTeX, fractions, sets, intervals), with a timeout",
        ),
    ]
