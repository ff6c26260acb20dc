"""The OpenTelemetry GenAI names Nenyax's spans use: one module, so that a rename is one edit.

The GenAI semantic conventions are still marked *Development* (they moved out of the main semconv
repository to ``open-telemetry/semantic-conventions-genai``, and names change between snapshots:
``gen_ai.system`` became ``gen_ai.provider.name``, ``cache_creation`` became ``cache_write``). Nenyax
pins the snapshot below as string literals rather than import ``opentelemetry-semantic-conventions``,
whose ``gen_ai`` constants are deprecated there. ``nenyax.*`` names are Nenyax's own, for what the
conventions have no name for (the environment URI, the episode status, the judgment's score).

Snapshot: semantic-conventions-genai ``docs/gen-ai/gen-ai-spans.md``, ``gen-ai-agent-spans.md`` and
``gen-ai-events.md`` (2026), as read for issue 21.
"""

from __future__ import annotations

# --- operations (gen_ai.operation.name values, and the first word of each span's name)
INVOKE_AGENT = "invoke_agent"
CHAT = "chat"
TEXT_COMPLETION = "text_completion"
EXECUTE_TOOL = "execute_tool"

# --- common to every GenAI span
OPERATION_NAME = "gen_ai.operation.name"
PROVIDER_NAME = "gen_ai.provider.name"
CONVERSATION_ID = "gen_ai.conversation.id"
ERROR_TYPE = "error.type"
ERROR_TYPE_OTHER = "_OTHER"
"""The conventions' fallback `error.type` when no low-cardinality class of the failure is known."""

# --- the agent span (one per episode)
AGENT_NAME = "gen_ai.agent.name"
AGENT_ID = "gen_ai.agent.id"

# --- inference spans (one per model call)
REQUEST_MODEL = "gen_ai.request.model"
REQUEST_MAX_TOKENS = "gen_ai.request.max_tokens"
REQUEST_TEMPERATURE = "gen_ai.request.temperature"
REQUEST_TOP_P = "gen_ai.request.top_p"
REQUEST_TOP_K = "gen_ai.request.top_k"
REQUEST_SEED = "gen_ai.request.seed"
REQUEST_STOP_SEQUENCES = "gen_ai.request.stop_sequences"
REQUEST_FREQUENCY_PENALTY = "gen_ai.request.frequency_penalty"
REQUEST_PRESENCE_PENALTY = "gen_ai.request.presence_penalty"
REQUEST_CHOICE_COUNT = "gen_ai.request.choice.count"
RESPONSE_MODEL = "gen_ai.response.model"
RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons"
USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"
USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"

REQUEST_PARAMS = {
    "max_tokens": REQUEST_MAX_TOKENS,
    "temperature": REQUEST_TEMPERATURE,
    "top_p": REQUEST_TOP_P,
    "top_k": REQUEST_TOP_K,
    "seed": REQUEST_SEED,
    "stop": REQUEST_STOP_SEQUENCES,
    "frequency_penalty": REQUEST_FREQUENCY_PENALTY,
    "presence_penalty": REQUEST_PRESENCE_PENALTY,
    "n": REQUEST_CHOICE_COUNT,
}
"""A recorded call's sampling parameter -> the attribute it is reported as."""

# --- tool spans (one per tool call)
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_TYPE_FUNCTION = "function"

# --- content: only when the user opts in (`CAPTURE_CONTENT_ENV`), each a JSON string
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
TOOL_DEFINITIONS = "gen_ai.tool.definitions"
TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_CALL_RESULT = "gen_ai.tool.call.result"

CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The variable OpenTelemetry's GenAI instrumentations read to record message content (off by default)."""
CAPTURE_CONTENT_ON = frozenset({"true", "1", "yes", "span_only", "span_and_event"})
"""Its values that turn capture on, case-insensitive: ``true`` (the contrib instrumentations' form) and
``opentelemetry-util-genai``'s modes that write content on spans."""

# --- the judgment: an event on the agent span, mirrored as plain attributes
EVALUATION_RESULT = "gen_ai.evaluation.result"
EVALUATION_NAME = "gen_ai.evaluation.name"
EVALUATION_SCORE_VALUE = "gen_ai.evaluation.score.value"
EVALUATION_SCORE_LABEL = "gen_ai.evaluation.score.label"
EVALUATION_EXPLANATION = "gen_ai.evaluation.explanation"

# --- Nenyax's own
ENV_URI = "nenyax.env.uri"
TASK_ID = "nenyax.task.id"
SEED = "nenyax.seed"
SAMPLE = "nenyax.sample"
GROUP_ID = "nenyax.group.id"
POLICY_KIND = "nenyax.policy.kind"
POLICY_NAME = "nenyax.policy.name"
POLICY_REVISION = "nenyax.policy.revision"
STATUS = "nenyax.status"
"""The episode's `Status` value (``ok``, ``policy_error``, ``infra_error``...)."""
SCORE = "nenyax.judgment.score"
PASSED = "nenyax.judgment.passed"
JUDGE = "nenyax.judgment.judge"
MODEL_CALL_ID = "nenyax.model_call.id"
QUEUED_S = "nenyax.model_call.queued_s"
STEP = "nenyax.step"
