"""Core's own entry-point module: the openai provider, return, llm and llm-group judges, incontext learner,
jsonl exporter."""

from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_providers() -> PluginSpec:
    """Any OpenAI-compatible chat server."""
    return PluginSpec(
        kind="provider",
        name="openai",
        factory="nenyax.core.builtin_plugins.openai_provider:OpenAIProvider",
        summary="any OpenAI-compatible chat server (token ids and logprobs when it returns them)",
    )


@hookimpl
def nenyax_register_judges() -> list[PluginSpec]:
    """The episode's return, for step environments whose rewards are the signal; a model under a rubric."""
    return [
        PluginSpec(
            kind="judge",
            name="return",
            factory="nenyax.core.builtin_plugins.return_judge:ReturnJudge",
            summary="the undiscounted sum of step rewards (passed at the env's reward threshold)",
        ),
        PluginSpec(
            kind="judge",
            name="llm",
            factory="nenyax.core.builtin_plugins.llm_judge:LLMJudge",
            summary="a model (the embedded one by default) judges the answer under a rubric: PASS/FAIL or 0-10",
        ),
        PluginSpec(
            kind="judge",
            name="llm-group",
            factory="nenyax.core.builtin_plugins.llm_group_judge:LLMGroupJudge",
            summary="a model reads one task's group of answers together and names the best (relative, for GRPO)",
        ),
    ]


@hookimpl
def nenyax_register_learners() -> PluginSpec:
    """Worked examples in the prompt: learning without weights, for any model."""
    return PluginSpec(
        kind="learner",
        name="incontext",
        factory="nenyax.core.builtin_plugins.incontext:IncontextLearner",
        summary="curates worked examples from the model's own best episodes into its prompt (no weights change)",
    )


@hookimpl
def nenyax_register_exporters() -> PluginSpec:
    """JSON Lines, with nothing to install."""
    return PluginSpec(
        kind="exporter",
        name="jsonl",
        factory="nenyax.core.builtin_plugins.jsonl_exporter:JsonlExporter",
        summary="JSON Lines (orjson): one row a line, TRL's conversational rows as they are",
    )
