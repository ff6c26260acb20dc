"""The columns of each row shape, described without pyarrow, so a columnar writer can build its own schema.

A `RowSchema` is a tuple of `Column`s; a `ColumnType` is one of a few kinds (``string``, ``int64``,
``float64``, ``bool``, ``binary``, ``json``) or a ``list`` of a type or a ``struct`` of columns. Every
column and field is nullable, and a row may leave a nullable key out (a JSONL writer then writes
nothing, a columnar one a null). ``json`` is any JSON value (a tool call's arguments, a tool's schema):
a columnar writer stores it as JSON text (Arrow's ``arrow.json``, ``datasets.Json``), because Arrow
would otherwise merge the keys of every row's objects into one struct and give each row the others'
keys as nulls. A JSONL writer writes it as the JSON it is.

The raw shape holds no ``json`` column: what differs from one environment to the next (observations,
actions, info, the whole record) is JSON *text* in ``string`` columns, or an array's dtype, shape and
bytes, so one run mixing a Gymnasium env and a question/answer dataset has one schema in every format.
"""

from __future__ import annotations

import attrs

KINDS = ("string", "int64", "float64", "bool", "binary", "json", "list", "struct")
"""Every kind of `ColumnType`."""


@attrs.frozen
class ColumnType:
    """A column's type: a scalar kind, ``list`` of `item`, or ``struct`` of `fields`."""

    kind: str = attrs.field(validator=attrs.validators.in_(KINDS))
    item: ColumnType | None = None
    fields: tuple[Column, ...] = ()

    def __str__(self) -> str:
        if self.kind == "list":
            return f"list<{self.item}>"
        if self.kind == "struct":
            return "struct<" + ", ".join(f"{f.name}: {f.type}" for f in self.fields) + ">"
        return self.kind


@attrs.frozen
class Column:
    """One named column (or struct field), nullable, with what it holds."""

    name: str
    type: ColumnType
    doc: str = ""


@attrs.frozen
class RowSchema:
    """The columns of one row shape, in order."""

    shape: str
    columns: tuple[Column, ...]

    @property
    def names(self) -> tuple[str, ...]:
        """The column names, in order."""
        return tuple(c.name for c in self.columns)


STRING, INT64, FLOAT64, BOOL, BINARY, JSON = (
    ColumnType(k) for k in ("string", "int64", "float64", "bool", "binary", "json")
)


def list_of(item: ColumnType) -> ColumnType:
    """``list<item>``."""
    return ColumnType("list", item=item)


def struct(*fields: Column) -> ColumnType:
    """``struct<fields>``."""
    return ColumnType("struct", fields=fields)


def col(name: str, type_: ColumnType, doc: str = "") -> Column:
    """A column (short, for the tables below)."""
    return Column(name, type_, doc)


def message_type(arguments: ColumnType) -> ColumnType:
    """A chat message as TRL's conversational rows hold it; `arguments` is the type of each tool call."""
    return struct(
        col("role", STRING),
        col("content", STRING, "the text (a list of parts is joined into its text)"),
        col("tool_calls", list_of(arguments), "``{type, id, function: {name, arguments}}`` each"),
        col("tool_call_id", STRING, "a tool message: the call it answers"),
        col("name", STRING, "a tool message: the tool's name"),
    )


MESSAGES = list_of(message_type(JSON))
"""Messages of SFT and DPO rows: tool calls as JSON values (arguments an object, as chat templates want)."""

VALUE = struct(
    col("type", STRING, "null, bool, int, float, str, list, dict or ndarray (json: any other JSON value)"),
    col("json", STRING, "the value as JSON text (every type but ndarray)"),
    col("dtype", STRING, "ndarray: numpy's dtype name"),
    col("shape", list_of(INT64), "ndarray: its shape"),
    col("data", BINARY, "ndarray: its C-order little-endian bytes (base64 in JSONL)"),
)
"""An observation or action of any environment, its type kept."""

RAW = RowSchema(
    "raw",
    (
        col("id", STRING, "the trajectory's id"),
        col("group_id", STRING),
        col("env_uri", STRING),
        col("mode", STRING, "step, rollout or task"),
        col("task_id", STRING),
        col("seed", INT64),
        col("sample", INT64, "which repeat of its task"),
        col("status", STRING, "ok, policy_error, env_error, verifier_error, infra_error, timeout, interrupted"),
        col("score", FLOAT64, "the judgment's score; null when not judged (never a fake 0)"),
        col("passed", BOOL),
        col("judge", STRING),
        col("feedback", STRING),
        col("components_json", STRING, "the judgment's named components, as JSON text"),
        col("policy_kind", STRING),
        col("policy_name", STRING),
        col("provider", STRING, "the model path: provider plugin"),
        col("model", STRING, "the model path: model name"),
        col("revision", STRING, "the model path: checkpoint or revision"),
        col("agent", STRING),
        col("error", STRING),
        col("started", FLOAT64, "Unix seconds"),
        col("duration_s", FLOAT64),
        col("token_faithful", BOOL),
        col("total_reward", FLOAT64, "the sum of the step rewards"),
        col(
            "steps",
            list_of(
                struct(
                    col("observation", VALUE),
                    col("action", VALUE),
                    col("reward", FLOAT64),
                    col("terminated", BOOL),
                    col("truncated", BOOL),
                    col("text", STRING),
                    col("info_json", STRING),
                )
            ),
        ),
        col("messages", list_of(message_type(STRING)), "the transcript; tool calls as JSON text"),
        col(
            "model_calls",
            list_of(
                struct(
                    col("id", STRING),
                    col("provider", STRING),
                    col("model", STRING),
                    col("finish_reason", STRING),
                    col("prompt_token_ids", list_of(INT64)),
                    col("completion_token_ids", list_of(INT64)),
                    col("logprobs", list_of(FLOAT64), "float64: exact replay of what was sampled"),
                    col("input_tokens", INT64),
                    col("output_tokens", INT64),
                    col("duration_s", FLOAT64),
                )
            ),
        ),
        col(
            "tool_calls",
            list_of(
                struct(
                    col("id", STRING),
                    col("name", STRING),
                    col("arguments_json", STRING),
                    col("result_json", STRING),
                    col("error", STRING),
                    col("step", INT64),
                )
            ),
        ),
        col("info_json", STRING, "the environment's own facts, as JSON text"),
        col("record", STRING, "the whole trajectory record as JSON text (`serde.loads` reads it back exactly)"),
    ),
)

SFT = RowSchema(
    "sft",
    (
        col("messages", MESSAGES, "TRL's conversational format"),
        col("tools", list_of(JSON), "the tool schemas offered (JSON-schema functions)"),
        col("score", FLOAT64),
        col("trajectory_id", STRING),
        col("group_id", STRING),
        col("task_id", STRING),
    ),
)

SFT_TOKENS = RowSchema(
    "sft",
    (
        col("input_ids", list_of(INT64), "the exact token ids the model saw and sampled"),
        col("assistant_masks", list_of(INT64), "1 on each sampled token, 0 on prompt tokens (TRL's column)"),
        col("score", FLOAT64),
        col("trajectory_id", STRING),
        col("group_id", STRING),
        col("task_id", STRING),
    ),
)


def _samples(shape: str) -> RowSchema:
    return RowSchema(
        shape,
        (
            col("prompt_ids", list_of(INT64), "the exact token ids of the prompt"),
            col("completion_ids", list_of(INT64), "sampled tokens, with the environment's and tools' between them"),
            col("logprobs", list_of(FLOAT64), "the sampler's logprob of each completion token (0 where masked 0)"),
            col("loss_mask", list_of(INT64), "1 on each sampled token, 0 on the environment's (TRL's env_mask)"),
            col("reward", FLOAT64, "the trajectory's score; null (never 0) where it may not be trained on"),
            col("trainable", BOOL, "whether the episode's status allows training on it"),
            col("calls", list_of(INT64), "the indexes of the model calls the row holds"),
            col("trajectory_id", STRING),
            col("group_id", STRING),
            col("task_id", STRING),
        ),
    )


MERGED = _samples("merged")
"""One row per episode (more where it forked): its calls laid end to end."""
STEPS = _samples("steps")
"""One row per model call."""

DPO = RowSchema(
    "dpo",
    (
        col("prompt", MESSAGES, "the messages both answers share"),
        col("chosen", MESSAGES, "the best trajectory's turns after the prompt"),
        col("rejected", MESSAGES, "the worst trajectory's turns after the prompt"),
        col("score_chosen", FLOAT64),
        col("score_rejected", FLOAT64),
        col("chosen_id", STRING),
        col("rejected_id", STRING),
        col("group_id", STRING),
        col("task_id", STRING),
    ),
)
