"""What a run is asked to do, as typed, versioned records: the settings ``run.toml`` holds.

`EvalSettings` is what ``nenyax eval`` and `nenyax.core.evaluate` run; `ModelSettings` (the
``[provider]`` table) and `PolicySettings` (the ``[policy]`` table) say who plays. `TrainSettings` is
what ``nenyax train`` runs (its learner in the ``[learner]`` table). They are `Record`s,
written and read by `serde` like every persisted record, so ``run.toml`` has a schema and the record
rule holds for it: a file of a newer minor version keeps the keys this version does not know (and writes
them back), a newer major version is refused in one sentence, and a key no version knows (a typo in a
hand-written config) is one sentence naming the keys there are. Files written before the settings had a
version read as 1.0.
"""

from __future__ import annotations

import math
from typing import Any, TypeVar

import attrs

from nenyax.core.contract import serde
from nenyax.core.contract.schema import SCHEMA_VERSION, Record, SchemaVersion
from nenyax.core.errors import UsageError, did_you_mean_pool
from nenyax.core.models.endpoint import DEFAULT_MODEL, Endpoint

R = TypeVar("R", bound=Record)


@attrs.frozen(kw_only=True)
class ModelSettings(Record):
    """A chat model behind a provider (run.toml's ``[provider]`` table): what an `Endpoint` is built from."""

    use: str
    """The provider plugin (``openai``, ``local``)."""
    model: str
    """The model's name at that provider."""
    base_url: str | None = None
    api_key_env: str | None = None
    """The variable holding the API key; a key itself is never written."""
    max_tokens: int | None = None
    temperature: float | None = None
    constrain: bool = False
    """Constrained decoding among the valid actions, where there are few."""
    params: dict[str, Any] = attrs.field(factory=dict)
    """Further sampling parameters (``top_p``, ``seed``, ``stop``...)."""
    defaults: dict[str, Any] = attrs.field(factory=dict)
    """Sampling parameters that apply only where a native loop asks for none (a command's own defaults)."""

    @classmethod
    def named(cls, spec: str | None, **settings: Any) -> ModelSettings:
        """``ModelSettings.named("openai:gpt-4.1-mini", temperature=0)``; None is the embedded model."""
        spec = spec or DEFAULT_MODEL
        use, _, model = spec.partition(":")
        if not use or not model:
            msg = f"Name the model as '<provider>:<model>' (e.g. {DEFAULT_MODEL!r}), not {spec!r}."
            raise UsageError(msg)
        return cls(use=use, model=model, **settings)

    @classmethod
    def of(cls, endpoint: Endpoint) -> ModelSettings:
        """The settings `endpoint` was made with (its key by variable name only)."""
        params = dict(endpoint.params)
        return cls(
            use=endpoint.provider_name,
            model=endpoint.model,
            base_url=endpoint.base_url,
            api_key_env=endpoint.api_key_env,
            max_tokens=params.pop("max_tokens", None),
            temperature=params.pop("temperature", None),
            constrain=endpoint.constrain,
            params=params,
            defaults=dict(endpoint.defaults),
        )

    @property
    def name(self) -> str:
        """``provider:model``."""
        return f"{self.use}:{self.model}"

    def endpoint(self) -> Endpoint:
        """The `Endpoint` these settings describe."""
        sampling: dict[str, Any] = dict(self.params)
        for key, value in (("max_tokens", self.max_tokens), ("temperature", self.temperature)):
            if value is not None:
                sampling[key] = value
        return Endpoint(
            self.name,
            base_url=self.base_url,
            api_key_env=self.api_key_env,
            constrain=self.constrain,
            defaults=self.defaults or None,
            **sampling,
        )


@attrs.frozen(kw_only=True)
class PolicySettings(Record):
    """A policy that is not a model (run.toml's ``[policy]`` table): a built-in one by name (``reference``)."""

    use: str


def _positive_int(name: str, value: Any, least: int = 1) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        msg = f"{name} must be a whole number of at least {least}, not {value!r}."
        raise UsageError(msg)


@attrs.frozen(kw_only=True)
class EvalSettings(Record):
    """What an evaluation plays: which environment, which tasks, how many samples each, and who plays.

    ``provider`` or ``policy`` says who plays (neither: the embedded model). Where episodes run (the
    backend, its workers) is not a setting: it never changes what is recorded, so a resumed run may pick
    another; nor is where spans go.
    """

    uri: str
    command: str = "eval"
    """The command that wrote the file (``--config`` of another command refuses it)."""
    tasks: int | None = None
    """The first N tasks (None: all), unless `task_ids` names them."""
    task_ids: tuple[str, ...] | None = None
    samples: int = 1
    """Episodes per task."""
    concurrency: int = 16
    """Episodes under way at once (free to change when resuming)."""
    timeout: float | None = None
    """Seconds an episode may take."""
    pass_threshold: float = 1.0
    """A score at or above this passes (pass@k), where the judge does not say itself."""
    judges: tuple[str, ...] = ()
    """Judges put on the environment beside its own verifier, each ``NAME[?options]`` (`nenyax.core.engine.judging`)."""
    score: str | None = None
    """How the score is composed from the verdicts (None: the native score)."""
    provider: ModelSettings | None = None
    policy: PolicySettings | None = None
    schema_version: SchemaVersion = SCHEMA_VERSION

    def __attrs_post_init__(self) -> None:
        if not self.uri:
            msg = "Name the environment to evaluate, e.g. `nenyax eval reasoning_gym:basic_arithmetic`."
            raise UsageError(msg)
        if self.tasks is not None:
            _positive_int("tasks", self.tasks)
        if self.tasks is not None and self.task_ids:
            msg = "Name the tasks either by count (tasks) or by id (task_ids), not both."
            raise UsageError(msg)
        _positive_int("samples", self.samples)
        _positive_int("concurrency", self.concurrency)
        if self.timeout is not None and not (isinstance(self.timeout, int | float) and self.timeout > 0):
            msg = f"timeout must be a number of seconds above 0, not {self.timeout!r}."
            raise UsageError(msg)
        if not (isinstance(self.pass_threshold, int | float) and math.isfinite(self.pass_threshold)):
            msg = f"pass_threshold must be a finite number, not {self.pass_threshold!r}."
            raise UsageError(msg)
        if self.provider is not None and self.policy is not None:
            msg = "A run is played by a model ([provider]) or a policy ([policy]), not both."
            raise UsageError(msg)

    @property
    def player(self) -> str:
        """Who plays, in words: ``policy reference`` or ``local:smollm2-135m``."""
        if self.policy is not None:
            return f"policy {self.policy.use}"
        return (self.provider or ModelSettings.named(None)).name

    def to_table(self) -> dict[str, Any]:
        """The settings as run.toml's tables (None, empty and false values left out: each is the default)."""
        table: dict[str, Any] = _drop_empty(serde.to_data(self))
        return table

    @classmethod
    def from_table(cls, table: dict[str, Any], where: str = "run.toml") -> EvalSettings:
        """Read run.toml's tables (its ``[recorded]`` table already set aside); one sentence for what is wrong."""
        return _from_table(cls, table, where, {"provider": ModelSettings, "policy": PolicySettings})


@attrs.frozen(kw_only=True)
class LearnerSettings(Record):
    """A learner by name and its options (run.toml's ``[learner]`` table: ``use = "grpo"``, ``lr = 1e-5``...)."""

    use: str
    options: dict[str, Any] = attrs.field(factory=dict)
    """Keyword options of the learner's factory (`nenyax train --option K=V`)."""


@attrs.frozen(kw_only=True)
class TrainSettings(Record):
    """What a training run plays: how many rounds, tasks and episodes, and (for run.toml) where and with what.

    `uri`, `learner` and `model` say what ``nenyax train`` loads and builds; `Trainer`, handed the
    environment and the learner themselves, reads only the round sizes.
    """

    uri: str = ""
    command: str = "train"
    learner: LearnerSettings | None = None
    model: str | None = None
    """The ``provider:model`` the learner improves (None: the learner's own default)."""
    rounds: int = 3
    """Rounds after round 0 (the measurement of the starting learner)."""
    group_size: int = 4
    """Episodes per training task in a round (a group)."""
    tasks_per_round: int = 8
    heldout: int = 16
    """Held-out tasks, the same every round."""
    seed: int = 0
    """Seeds the held-out draw and each round's training tasks."""
    concurrency: int = 16
    timeout: float | None = None
    """Seconds an episode may run."""
    judges: tuple[str, ...] = ()
    """Judges put on the environment (`EvalSettings.judges`): the training and held-out scores are composed
    from their verdicts as `score` says."""
    score: str | None = None
    schema_version: SchemaVersion = SCHEMA_VERSION

    def __attrs_post_init__(self) -> None:
        for name in ("rounds", "group_size", "tasks_per_round", "heldout", "concurrency"):
            value = getattr(self, name)
            least = 0 if name == "rounds" else 1
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                msg = f"{name.replace('_', '-')} must be a whole number of at least {least}, not {value!r}."
                raise UsageError(msg)

    def to_table(self) -> dict[str, Any]:
        """The settings as run.toml's tables; the learner's options sit beside ``use`` in ``[learner]``."""
        table: dict[str, Any] = _drop_empty(serde.to_data(self))
        if self.learner is not None:
            table["learner"] = {"use": self.learner.use, **self.learner.options}
        return table

    @classmethod
    def from_table(cls, table: dict[str, Any], where: str = "run.toml") -> TrainSettings:
        """Read run.toml's tables; one sentence for what is wrong."""
        table = dict(table)
        learner = table.get("learner")
        if isinstance(learner, dict):
            options = {k: v for k, v in learner.items() if k != "use"}
            table["learner"] = {"use": learner.get("use"), "options": options}
        return _from_table(cls, table, where, {})


def _from_table(cls: type[R], table: dict[str, Any], where: str, sections: dict[str, type[Record]]) -> R:
    """`table` as a `cls` record: a typo is refused by name, a newer minor's keys are kept (the record rule)."""
    table = dict(table)
    version = _version_of(table, where)
    if version <= SCHEMA_VERSION:
        _refuse_unknown(table, cls, where, "")
        for key, sub in sections.items():
            if isinstance(table.get(key), dict):
                _refuse_unknown(table[key], sub, where, f"[{key}] ")
    try:
        return serde.from_data(table, cls)
    except UsageError:
        raise
    except Exception as exc:  # noqa: BLE001 - cattrs raises an exception group naming every bad value
        msg = f"{where} does not describe a run nenyax can read ({_first_error(exc)}); fix the file or write it anew."
        raise UsageError(msg) from None


def _version_of(table: dict[str, Any], where: str) -> SchemaVersion:
    if "schema_version" not in table:
        return SchemaVersion(1, 0)
    try:
        return SchemaVersion.parse(table["schema_version"])
    except ValueError as exc:
        msg = f"{where}: {exc}."
        raise UsageError(msg) from None


def _refuse_unknown(table: dict[str, Any], cls: type[Record], where: str, section: str) -> None:
    known = {f.name for f in attrs.fields(cls)} - {"unknown_fields"}
    for key in sorted(set(table) - known):
        close = did_you_mean_pool(key, known)
        hint = f"did you mean {' or '.join(close)}?" if close else f"the keys are {', '.join(sorted(known))}."
        msg = f"{where} names {section}{key!r}, which no run setting is; {hint}"
        raise UsageError(msg)


def _first_error(exc: BaseException) -> str:
    inner = getattr(exc, "exceptions", None)
    while inner:
        exc = inner[0]
        inner = getattr(exc, "exceptions", None)
    notes = getattr(exc, "__notes__", None)
    return f"{exc}{' (' + notes[0] + ')' if notes else ''}"


def _drop_empty(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_empty(v) for k, v in value.items() if v is not None and v != {} and v != [] and v is not False}
    return value
