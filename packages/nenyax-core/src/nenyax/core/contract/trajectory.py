"""What happened in an episode: steps, model calls, the judgment and the failure vocabulary."""

from __future__ import annotations

import enum
import math
import os
from typing import Any

import attrs

from nenyax.core.contract.manifest import Mode
from nenyax.core.contract.schema import SCHEMA_VERSION, Record, SchemaVersion


class Status(enum.Enum):
    """How an episode ended. Only `OK` and `POLICY_ERROR` may ever be trained on."""

    OK = "ok"
    """Completed and judged."""
    POLICY_ERROR = "policy_error"
    """The policy failed (raised or gave an unusable action): judged, and scored 0."""
    ENV_ERROR = "env_error"
    """The environment failed: no judgment."""
    VERIFIER_ERROR = "verifier_error"
    """The verifier failed while judging: no judgment."""
    INFRA_ERROR = "infra_error"
    """Infrastructure failed (network, model server, sandbox): no judgment."""
    TIMEOUT = "timeout"
    """The episode ran out of time: no judgment."""
    INTERRUPTED = "interrupted"
    """The user stopped the run (Ctrl-C) before the episode ended: no judgment."""

    @property
    def trainable(self) -> bool:
        """True when a trajectory with this status may be used as training signal."""
        return self in (Status.OK, Status.POLICY_ERROR)


class Tier(enum.IntEnum):
    """What `nenyax check` measured, in increasing order of trust."""

    NONE = 0
    CONNECTABLE = 1
    EVALUABLE = 2
    TRAINABLE = 3
    AUDITED = 4

    @property
    def label(self) -> str:
        """Lower-case name used in reports."""
        return self.name.lower()


def _finite(_inst: object, attribute: attrs.Attribute[Any], value: float) -> None:
    if not math.isfinite(value):
        msg = f"{attribute.name} must be a finite number, got {value!r}."
        raise ValueError(msg)


def new_id() -> str:
    """A fresh random id for trajectories, groups, model calls and tool calls."""
    return os.urandom(16).hex()  # as random as uuid4().hex, at a quarter of its cost


@attrs.frozen(kw_only=True)
class Judgment(Record):
    """The verdict on one finished episode, the same shape in every format."""

    score: float = attrs.field(converter=float, validator=_finite)
    """The scalar reward of the episode (finite)."""
    passed: bool | None = None
    """Whether the episode counts as solved, when the judge can tell."""
    components: dict[str, float] = attrs.field(factory=dict)
    """Named parts of the score (e.g. per-test results, format bonus)."""
    feedback: str = ""
    """Human-readable explanation from the judge."""
    judge: str = ""
    """Which judge produced this, e.g. ``reasoning_gym:basic_arithmetic``."""


@attrs.frozen(kw_only=True)
class Step(Record):
    """One action in a step-mode episode and what the environment answered."""

    observation: Any
    """The (JSON-able) observation the action was chosen from."""
    action: Any
    """The (JSON-able) action taken."""
    reward: float = 0.0
    """Reward for this step."""
    terminated: bool = False
    """The episode reached a terminal state."""
    truncated: bool = False
    """The episode was cut short (time limit), not terminal."""
    info: dict[str, Any] = attrs.field(factory=dict)
    """Format-specific extra data (JSON-able)."""
    text: str | None = None
    """The policy's raw text, when the action was parsed from a model's reply."""

    @property
    def done(self) -> bool:
        """True when the episode is over, for either reason."""
        return self.terminated or self.truncated


@attrs.frozen(kw_only=True)
class ModelCall(Record):
    """One request to a chat model and its response, as recorded by an Endpoint or the proxy."""

    messages: tuple[dict[str, Any], ...]
    """The request's chat messages."""
    response: dict[str, Any]
    """The response message (role, content, tool calls)."""
    provider: str = ""
    """Provider plugin that served the call."""
    model: str = ""
    """Model name as requested."""
    params: dict[str, Any] = attrs.field(factory=dict)
    """Sampling parameters sent."""
    tools: tuple[dict[str, Any], ...] = ()
    """Tool schemas offered."""
    prompt_token_ids: tuple[int, ...] | None = None
    """Token ids of the rendered prompt, when known."""
    completion_token_ids: tuple[int, ...] | None = None
    """Token ids sampled, when known."""
    logprobs: tuple[float, ...] | None = None
    """Log-probability of each completion token, when known."""
    tokens: tuple[str, ...] | None = None
    """The text of each completion token (what OpenAI's ``logprobs.content[].token`` says), when known."""
    top_logprobs: tuple[tuple[dict[str, Any], ...], ...] | None = None
    """Per completion token, the most likely alternatives (``{"token", "logprob"}``, plus ``"id"`` when
    known), when the caller asked for them (``top_logprobs``)."""
    requested_params: dict[str, Any] | None = None
    """The parameters the caller asked for (a native loop's own), where `params` is what was sent: the
    user's explicit `Endpoint` parameters win over the loop's (None: recorded before 1.2)."""
    prompt: str | None = None
    """A raw text completion's prompt (its `messages` are then empty)."""
    prompt_logprobs: tuple[dict[str, Any], ...] | None = None
    """A scored prompt (``echo``), per prompt token: ``{"id", "token", "logprob", "top_logprobs"}``, the
    logprob given the tokens before it (None for the first) and its most likely alternatives."""
    finish_reason: str | None = None
    """Why generation stopped (``stop``, ``length``, ``tool_calls``...)."""
    usage: dict[str, int] = attrs.field(factory=dict)
    """Token usage as reported by the server."""
    fingerprint: str | None = None
    """The server's model fingerprint (system_fingerprint, revision or weights hash)."""
    chat_template_hash: str | None = None
    """A hash of the chat template used to render the prompt, when known."""
    id: str = attrs.field(factory=new_id)
    """Unique id of the call (the one its `ModelCallStarted` and `ModelCallEnded` events carry)."""
    started: float = 0.0
    """Wall-clock time the call was made (Unix seconds); 0 for a call recorded outside an episode."""
    duration_s: float = 0.0
    """Seconds the episode waited for the reply: retries, a wait for a free slot at the endpoint and a
    model still loading included (`Endpoint.prepare` keeps the load out)."""
    queued_s: float = 0.0
    """Of `duration_s`, the seconds the call waited before it was served: for a free slot of its Endpoint
    (``max_concurrency``) and in its provider's queue (the embedded model serving other calls first).
    ``duration_s - queued_s`` is the call's own latency."""


@attrs.frozen(kw_only=True)
class ToolCall(Record):
    """One call of a tool the format exposes: a step-mode tool action, or a native loop's tool message."""

    name: str
    """The tool's name."""
    arguments: Any = None
    """The (JSON-able) arguments it was called with, as the format gives them (an object, or the
    model's argument string when that is not JSON)."""
    result: Any = None
    """What the tool answered (JSON-able); None when it failed (see `error`)."""
    error: str | None = None
    """One sentence about the failure, when the call failed or was never answered."""
    id: str = attrs.field(factory=new_id)
    """The call's id: the one the model or the format gave it (``call_...``), else a fresh one."""
    started: float = 0.0
    """Wall-clock time the call was made (Unix seconds)."""
    duration_s: float = 0.0
    """Seconds it took. For a native loop's tool this is the gap between the model call that asked for
    it and the request that carried its answer (the loop's own work in between included)."""
    step: int | None = None
    """Step mode: the index of the step the call was the action of."""
    model_call_id: str | None = None
    """Native loops: the id of the `ModelCall` whose response asked for this call."""


@attrs.frozen(kw_only=True)
class PolicyInfo(Record):
    """Which policy or model produced a trajectory: the "model path"."""

    kind: str
    """``callable``, ``reference``, ``null``, ``random``, ``endpoint`` or a learner name."""
    name: str = ""
    """Human name: a function's qualified name, ``provider:model``..."""
    provider: str | None = None
    """Provider plugin, for model policies."""
    model: str | None = None
    """Model name, for model policies."""
    revision: str | None = None
    """Checkpoint path, revision or weights hash, when known."""


@attrs.frozen(kw_only=True)
class JudgeVerdict(Record):
    """One judge's verdict on an episode, kept beside the judgment its score was composed into."""

    label: str
    """The component it is under in the episode's judgment: ``native`` for the format's own verifier, else
    the judge's name or the label it was given (``--judge llm?as=style``)."""
    judge: str
    """The judge as it was asked for (``llm?rubric=...``), or the native judgment's ``judge``."""
    judgment: Judgment | None = None
    """Its verdict; None where it failed (see `error`)."""
    error: str | None = None
    """One sentence, where the judge failed (raised, timed out, or gave a verdict that could not be read)."""
    model_calls: tuple[ModelCall, ...] = ()
    """The judge's own model calls: never the policy's (not exported as its training data, not counted in its
    tokens), kept even where the judge then failed."""


@attrs.frozen(kw_only=True)
class Timing(Record):
    """Wall-clock bounds of an episode (Unix seconds)."""

    started: float
    ended: float

    @property
    def seconds(self) -> float:
        """Duration of the episode."""
        return self.ended - self.started


@attrs.frozen(kw_only=True)
class Trajectory(Record):
    """One episode, in any mode, judged the same way everywhere."""

    env_uri: str
    """URI of the environment that ran it."""
    manifest_digest: str
    """`serde.digest` of the manifest it ran with."""
    mode: Mode
    """Mode of the environment."""
    task_id: str | None
    """Stable task id, when the format has one."""
    seed: int | None
    """Seed the episode started from, when seeded."""
    policy: PolicyInfo
    """What produced the actions."""
    status: Status
    """How the episode ended."""
    judgment: Judgment | None
    """The verdict; None whenever the status is not trainable (never a fake 0)."""
    steps: tuple[Step, ...] = ()
    """Step-mode turns, in order."""
    model_calls: tuple[ModelCall, ...] = ()
    """Every model call made during the episode."""
    tool_calls: tuple[ToolCall, ...] = ()
    """Every tool call the format exposes, in the order they were made."""
    messages: tuple[dict[str, Any], ...] = ()
    """The chat transcript, when the episode was played through messages."""
    timing: Timing | None = None
    """Wall-clock bounds."""
    error: str | None = None
    """One sentence about the failure, for any status but ``ok``."""
    group_id: str | None = None
    """Shared by trajectories of the same task from the same policy (GRPO groups)."""
    sample: int = 0
    """Which repeat of its task in a run this episode is (0, 1, ...): what `eval --resume` skips by."""
    agent: str | None = None
    """Task mode: the agent the harness ran (``model``, ``reference``, ``null``, ``random``); rollout mode:
    ``model``; None in step mode, where the policy itself acts. (The policy's revision is `policy.revision`.)"""
    token_faithful: bool | None = None
    """Whether the model calls' token ids are what a learner may train on as they are: each completion's
    ids decode to its text and each prompt's ids extend the call before (`nenyax.core.contract.fidelity`).
    None: not known (no token ids, or no tokenizer to decode them). Exporters and learners may refuse False."""
    final_observation: Any = None
    """Step mode: the (JSON-able) observation the episode ended on, after its last step (each `Step` holds the
    observation its action was chosen from); None in other modes, or when the episode took no step."""
    verdicts: tuple[JudgeVerdict, ...] = ()
    """Where judges other than the format's own judged the episode: each one's verdict, the native one
    first (`nenyax.core.engine.judging`); `judgment` is then their composition. Empty otherwise."""
    info: dict[str, Any] = attrs.field(factory=dict)
    """The environment's own facts about the episode (JSON-able): a harness's logs, a sandbox image
    digest... Nothing of Nenyax's goes here: what tools rely on has a field of its own."""
    id: str = attrs.field(factory=new_id)
    """Unique id of this trajectory, made when the episode starts: the proxy route, the events and the
    sink all carry it."""
    schema_version: SchemaVersion = SCHEMA_VERSION
    """Layout version of the persisted record."""

    @property
    def score(self) -> float | None:
        """The judgment's score, or None when the episode was not judged."""
        return None if self.judgment is None else self.judgment.score


@attrs.frozen(kw_only=True)
class Group:
    """Trajectories of the same task from the same policy revision, compared against each other."""

    group_id: str
    task_id: str | None
    trajectories: tuple[Trajectory, ...]
    policy: PolicyInfo | None = None
    """The policy (and revision) every member was played by."""

    @property
    def scores(self) -> tuple[float, ...]:
        """Scores of the judged members, in order."""
        return tuple(t.judgment.score for t in self.trajectories if t.judgment is not None)

    @property
    def trainable(self) -> tuple[Trajectory, ...]:
        """The members a learner may train on (status ``ok`` or ``policy_error``)."""
        return tuple(t for t in self.trajectories if t.status.trainable)
