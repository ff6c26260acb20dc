"""In-memory reference implementations for tests: an ``arith`` adapter that passes every check,
and deliberately broken variants, one flaw each, that prove the kit's checks can fail; a judge and
a provider, sound and broken, for the checks every kind shares; a learner without a model.

Why fakes, not a real adapter: nenyax-core and nenyax-cli are tested alone, and every real adapter
depends on nenyax-core, so none can be installed in their tests (the real adapters are tested with
the kit in their own distributions and in tests/). And no real adapter is broken in exactly one known
way, which is what proving a check can fail needs. Available to plugin authors who need a known-good
environment.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import string
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs

from nenyax.core.contract.manifest import Capabilities, Manifest, Mode, Split
from nenyax.core.contract.trajectory import Group, Judgment, PolicyInfo, Step
from nenyax.core.contract.uri import EnvURI
from nenyax.core.engine.environment import StepEnvironment
from nenyax.core.engine.session import Session
from nenyax.core.errors import BadURIError, InfraFailure, PolicyFailure
from nenyax.core.hookspecs import PluginSpec, hookimpl
from nenyax.core.plugins.adapter import AdapterCapabilities, Listing
from nenyax.core.plugins.judge import JudgeCapabilities


class ArithEnvironment(StepEnvironment):
    """``arith:add?size=N&seed=S``: single-turn additions, judged by exact match."""

    def __init__(
        self,
        uri: str,
        size: int,
        seed: int,
        capabilities: Capabilities | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        """Build the manifest; `capabilities` lets broken variants over-claim; `extra` records options."""
        self.size, self.seed = size, seed
        super().__init__(
            Manifest(
                uri=uri,
                format="arith",
                format_version="1",
                mode=Mode.STEP,
                name="add",
                splits=(Split(name="all", count=size),),
                observation="A question like 'What is 3 + 4?'.",
                action="The sum, as text.",
                score_range=(0.0, 1.0),
                extra=extra or {},
                capabilities=capabilities
                or Capabilities(seeded=True, stable_task_ids=True, reference_policy=True, max_turns=1),
            )
        )

    def task_ids(self, split: str | None = None, limit: int | None = None) -> list[str]:
        """``add/<seed>/<index>``."""
        count = self.size if limit is None else min(limit, self.size)
        return [f"add/{self.seed}/{i}" for i in range(count)]

    def operands(self, task: str) -> tuple[int, int]:
        """The two numbers of a task, derived from its id alone."""
        rng = random.Random(task)
        return rng.randint(0, 99), rng.randint(0, 99)

    def session(self, task: str | None = None, seed: int | None = None) -> ArithSession:
        """Open `task` (the first task when none is given)."""
        task = task or self.task_ids(limit=1)[0]
        prefix, _, index = task.rpartition("/")
        if prefix != f"add/{self.seed}" or not index.isdigit() or int(index) >= self.size:
            msg = f"{task!r} is not a task of {self.uri}."
            raise BadURIError(msg)
        return ArithSession(self, task)


class ArithSession(Session):
    """One addition question; any answer ends it."""

    action_type: type | tuple[type, ...] = str

    def __init__(self, env: ArithEnvironment, task: str) -> None:
        """Start the question of `task`."""
        self.env, self.task_id, self.seed = env, task, env.seed
        self.a, self.b = env.operands(task)
        self.answer: str | None = None

    @property
    def observation(self) -> Any:
        """The question."""
        return f"What is {self.a} + {self.b}?"

    @property
    def done(self) -> bool:
        """Done after one answer."""
        return self.answer is not None

    def act(self, action: Any) -> Step:
        """Exact-match the answer."""
        self.answer = str(action).strip()
        reward = 1.0 if self.answer == str(self.a + self.b) else 0.0
        return Step(observation=self.observation, action=action, reward=reward, terminated=True)

    def judge(self, steps: Sequence[Step]) -> Judgment:
        """The last step's reward."""
        score = steps[-1].reward if steps else 0.0
        return Judgment(score=score, passed=score == 1.0, judge="arith:exact")

    def render(self) -> list[dict[str, Any]]:
        """The question as a user message."""
        return [{"role": "user", "content": self.observation}]

    def reference_action(self) -> Any:
        """The correct sum."""
        return str(self.a + self.b)

    def null_action(self) -> Any:
        """An empty answer."""
        return ""

    def random_action(self, rng: random.Random) -> Any:
        """Random letters."""
        return "".join(rng.choice(string.ascii_lowercase) for _ in range(8))


class ArithAdapter:
    """The well-behaved fake adapter: passes every adapter check."""

    def load(self, uri: EnvURI, context: Any = None) -> StepEnvironment:
        """Load ``arith:add``; anything else is a one-sentence BadURIError.

        ``size`` and ``seed`` come from the URI, else from the load config (``load(uri, config={"size": 3})``).
        """
        if uri.target != "add":
            msg = f"The arith format has one environment, 'add'; there is no {uri.target!r}."
            raise BadURIError(msg)
        config = getattr(context, "config", None) or {}
        size = int(uri.params.get("size", config.get("size", 10)))
        return ArithEnvironment(uri.raw, size=size, seed=int(uri.params.get("seed", config.get("seed", 0))))

    def examples(self) -> list[str]:
        """One URI that loads offline."""
        return ["arith:add?size=5"]


class TaggedArithAdapter(ArithAdapter):
    """Takes a list-valued ``tags`` parameter (a JSON list or a tuple) and records it in the manifest (sound)."""

    def load(self, uri: EnvURI, context: Any = None) -> StepEnvironment:
        """``arith:add?tags=["a","b"]``: the tags are recorded, as reasoning-gym records a dataset's config."""
        env = super().load(uri, context)
        assert isinstance(env, ArithEnvironment)
        tags = uri.params.get("tags", ())
        if not isinstance(tags, list | tuple):
            msg = f"tags must be a list, got {tags!r}."
            raise BadURIError(msg)
        return ArithEnvironment(uri.raw, size=env.size, seed=env.seed, extra={"tags": tuple(tags)})

    def examples(self) -> list[str]:
        """One URI with a list-valued parameter."""
        return ['arith:add?size=5&tags=["a","b"]']


# ---------------------------------------------------------------- broken variants, one flaw each


class ListOnlyTagsAdapter(TaggedArithAdapter):
    """Flaw: the tuple spelling of a list (``("a","b")``) is refused though the grammar reads it as a sequence."""

    def load(self, uri: EnvURI, context: Any = None) -> StepEnvironment:
        if isinstance(uri.params.get("tags"), tuple):
            msg = "tags must be a JSON list."
            raise BadURIError(msg)
        return super().load(uri, context)


class NotAnAdapter:
    """Flaw: the factory returns something without ``load``/``examples``."""


class ForeignExamplesAdapter(ArithAdapter):
    """Flaw: examples name another format."""

    def examples(self) -> list[str]:
        return ["other:add"]


class NeedsAnOptionAdapter(ArithAdapter):
    """Flaw: the factory cannot be called as ``factory()``: it requires an option."""

    def __init__(self, size: int) -> None:
        self.size = size


class CrashingExamplesAdapter(ArithAdapter):
    """Flaw: ``examples()`` raises, so the checks that read the examples crash (an error, not a finding)."""

    def examples(self) -> list[str]:
        msg = "examples are not ready"
        raise RuntimeError(msg)


class ListingArithAdapter(ArithAdapter):
    """Declares the ``listing`` capability and lists what it loads (sound)."""

    capabilities = AdapterCapabilities(listing=True)

    def listing(self, where: str | None = None) -> list[Listing]:
        """The one environment."""
        return [Listing(uri="arith:add?size=3", description="additions")]


class ForeignListingAdapter(ListingArithAdapter):
    """Flaw: lists URIs of another scheme."""

    def listing(self, where: str | None = None) -> list[Listing]:
        return [Listing(uri="other:add")]


class ClaimsListingAdapter(ArithAdapter):
    """Flaw: declares ``listing`` but has no ``listing()``."""

    capabilities = AdapterCapabilities(listing=True)


class UnstableManifestAdapter(ArithAdapter):
    """Flaw: the manifest embeds the load time, so its digest changes on every load."""

    def load(self, uri: EnvURI, context: Any = None) -> StepEnvironment:
        env = super().load(uri, context)
        env.manifest = attrs.evolve(env.manifest, extra={"loaded_at": time.perf_counter_ns()})
        return env


class NegativeSplitAdapter(ArithAdapter):
    """Flaw: the manifest claims a negative task count, so ``connectable/manifest-valid`` fails while every
    later check, of every tier, passes: the report must still make the failure plain."""

    def load(self, uri: EnvURI, context: Any = None) -> StepEnvironment:
        env = super().load(uri, context)
        env.manifest = attrs.evolve(env.manifest, splits=(Split(name="all", count=-1),))
        return env


class CrashOnBadURIAdapter(ArithAdapter):
    """Flaw: an unknown name raises KeyError instead of a clear BadURIError."""

    def load(self, uri: EnvURI, context: Any = None) -> StepEnvironment:
        if uri.target != "add":
            raise KeyError(uri.target)
        return super().load(uri, context)


class WrongReferenceEnvironment(ArithEnvironment):
    """Flaw: claims an oracle, but its 'reference' answers are wrong."""

    def session(self, task: str | None = None, seed: int | None = None) -> ArithSession:
        session = super().session(task, seed)
        session.reference_action = lambda: "-1"  # type: ignore[method-assign]
        return session


class WrongReferenceAdapter(ArithAdapter):
    """Flaw: over-claims `reference_policy`."""

    def load(self, uri: EnvURI, context: Any = None) -> StepEnvironment:
        base = super().load(uri, context)
        return WrongReferenceEnvironment(uri.raw, size=base.size, seed=base.seed)  # type: ignore[attr-defined]


class TupleObservationSession(ArithSession):
    """Flaw: observations are tuples, which JSON turns into lists (so records do not read back equal)."""

    @property
    def observation(self) -> Any:
        return (self.a, self.b)


class TupleObservationEnvironment(ArithEnvironment):
    """Serves `TupleObservationSession`s."""

    def session(self, task: str | None = None, seed: int | None = None) -> ArithSession:
        base = super().session(task, seed)
        return TupleObservationSession(self, base.task_id or "")


class TupleObservationAdapter(ArithAdapter):
    """Flaw: non-JSON-native observations."""

    def load(self, uri: EnvURI, context: Any = None) -> StepEnvironment:
        base = super().load(uri, context)
        return TupleObservationEnvironment(uri.raw, size=base.size, seed=base.seed)  # type: ignore[attr-defined]


class MostlyStableSession(ArithSession):
    """Its question carries how often its task was opened, on every task but the first one opened."""

    @property
    def observation(self) -> Any:
        opened = self.env.opened  # type: ignore[attr-defined]
        question = super().observation
        return question if self.task_id == next(iter(opened)) else f"{question} ({opened[self.task_id]})"


class MostlyStableEnvironment(ArithEnvironment):
    """Serves `MostlyStableSession`s: the same seed recreates the first task opened and no other."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.opened: dict[str, int] = {}

    def session(self, task: str | None = None, seed: int | None = None) -> ArithSession:
        base = super().session(task, seed)
        self.opened[base.task_id or ""] = self.opened.get(base.task_id or "", 0) + 1
        return MostlyStableSession(self, base.task_id or "")


class MostlyStableAdapter(ArithAdapter):
    """Flaw: claims `seeded`, yet only one task replays the same (a wrapped Crafter differed in 2 runs of 5)."""

    def load(self, uri: EnvURI, context: Any = None) -> StepEnvironment:
        base = super().load(uri, context)
        return MostlyStableEnvironment(uri.raw, size=base.size, seed=base.seed)  # type: ignore[attr-defined]


class AdapterPlugin:
    """A plugin object (as an entry-point module would be) declaring one ``arith`` adapter."""

    def __init__(self, factory: str = "nenyax_testsupport.fakes:ArithAdapter", name: str = "arith") -> None:
        """Declare adapter `name` built by `factory`."""
        self.factory, self.name = factory, name

    @hookimpl
    def nenyax_register_adapters(self) -> PluginSpec:
        """The fake adapter's spec."""
        return PluginSpec(kind="adapter", name=self.name, factory=self.factory, summary="in-memory fake")


class LengthJudge:
    """An answer judge sound for the checks every kind shares: passes answers of exactly `size` characters.

    It ignores the reference, so the judge kit's own ``judge/right-beats-wrong`` fails it (its sound judge
    is `nenyax_testsupport.kit_fakes.GoldJudge`)."""

    capabilities = JudgeCapabilities(answer=True)

    def __init__(self, size: int = 3) -> None:
        """`size`: the length that passes."""
        self.size = size

    def judge(self, answer: str, reference: Any) -> Judgment:
        """1 when `answer` has `size` characters."""
        ok = len(answer) == self.size
        return Judgment(score=float(ok), passed=ok, judge="length")


class ClaimsTrajectoryJudge(LengthJudge):
    """Flaw: declares the ``trajectory`` capability without ``judge_trajectory``."""

    capabilities = JudgeCapabilities(answer=True, trajectory=True)


class UndeclaredJudge:
    """Flaw: has ``judge()`` but declares no capability, so no caller can know what it judges."""

    capabilities = JudgeCapabilities()

    def judge(self, answer: str, reference: Any) -> Judgment:
        return Judgment(score=0.0)


class EchoProvider:
    """A sound provider for the common checks (it answers nothing: no check of the common kit calls it)."""

    def __init__(self, *, base_url: str | None = None, api_key: str | None = None) -> None:
        """Take the options every provider is given."""
        self.base_url, self.api_key = base_url, api_key

    async def complete(self, request: Any) -> Any:
        """Not used by the common checks."""
        raise NotImplementedError

    async def aclose(self) -> None:
        """Nothing to release."""


class NoBaseURLProvider(EchoProvider):
    """Flaw: refuses ``base_url``, an option every provider is given."""

    def __init__(self, *, api_key: str | None = None) -> None:
        self.api_key = api_key


class KindPlugin:
    """A plugin object declaring one plugin of any `kind` (as an entry-point module would)."""

    def __init__(self, kind: str, name: str, factory: str) -> None:
        """Declare `kind` plugin `name` built by `factory`."""
        self.spec = PluginSpec(kind=kind, name=name, factory=factory, summary="in-memory fake")

    def _declare(self, kind: str) -> list[PluginSpec]:
        return [self.spec] if self.spec.kind == kind else []

    @hookimpl
    def nenyax_register_judges(self) -> list[PluginSpec]:
        """The spec, when it is a judge."""
        return self._declare("judge")

    @hookimpl
    def nenyax_register_providers(self) -> list[PluginSpec]:
        """The spec, when it is a provider."""
        return self._declare("provider")


class NoOracleAdapter(ArithAdapter):
    """Claims only `seeded`: no reference, so the audit is skipped (and blocks its tier)."""

    def load(self, uri: EnvURI, context: Any = None) -> StepEnvironment:
        return ArithEnvironment(uri.raw, size=4, seed=0, capabilities=Capabilities(seeded=True))


class UnseededAdapter(ArithAdapter):
    """Claims nothing: the seed checks are skipped (and block trainable)."""

    def load(self, uri: EnvURI, context: Any = None) -> StepEnvironment:
        return ArithEnvironment(uri.raw, size=4, seed=0, capabilities=Capabilities())


class UnreachableAdapter(ArithAdapter):
    """Stands for a server that cannot be reached: loading raises `InfraFailure`."""

    def load(self, uri: EnvURI, context: Any = None) -> StepEnvironment:
        msg = "Cannot reach the server at http://127.0.0.1:9 (connection refused)."
        raise InfraFailure(msg)


class TwoStepSession(ArithSession):
    """Asks for its answer twice: two steps, whatever the environment claims."""

    def __init__(self, env: ArithEnvironment, task: str) -> None:
        super().__init__(env, task)
        self.acts = 0

    @property
    def done(self) -> bool:
        return self.acts >= 2

    def act(self, action: Any) -> Step:
        self.acts += 1
        step = super().act(action)
        return attrs.evolve(step, terminated=self.done)


class TwoStepArith(ArithEnvironment):
    def session(self, task: str | None = None, seed: int | None = None) -> ArithSession:
        return TwoStepSession(self, task or self.task_ids(limit=1)[0])


class NotMultiTurnAdapter(ArithAdapter):
    """Claims single-turn episodes (no `max_turns` to cut them at), and plays two turns."""

    def load(self, uri: EnvURI, context: Any = None) -> StepEnvironment:
        caps = Capabilities(seeded=True, stable_task_ids=True, reference_policy=True, multi_turn=False)
        return TwoStepArith(uri.raw, size=4, seed=0, capabilities=caps)


class ProcessBoundSession(ArithSession):
    def reference_action(self) -> Any:
        """A reference answer carrying the process id: another interpreter plays other steps."""
        return f"{self.a + self.b} (process {os.getpid()})"


class ProcessBoundArith(ArithEnvironment):
    def session(self, task: str | None = None, seed: int | None = None) -> ArithSession:
        return ProcessBoundSession(self, task or self.task_ids(limit=1)[0])


class ProcessBoundAdapter(ArithAdapter):
    """Plays differently in every process (``?elsewhere=differ``), or loads only where ``hash("nenyax")`` is
    ``home`` (``?elsewhere=fail&home=N``: an interpreter with another hash seed cannot load it): what a fresh
    interpreter's replay must catch."""

    def load(self, uri: EnvURI, context: Any = None) -> StepEnvironment:
        if uri.params.get("elsewhere") == "fail" and int(uri.params.get("home", 0)) != hash("nenyax"):
            msg = "this environment's state lives in the process that made it"
            raise RuntimeError(msg)
        if uri.params.get("elsewhere") == "differ":
            return ProcessBoundArith(uri.raw, size=4, seed=0)
        return ArithEnvironment(uri.raw, size=4, seed=0)


class DriftingDigestArith(ArithEnvironment):
    @property
    def digest(self) -> str:
        """Another digest each time it is read: a trajectory's can never be the environment's."""
        self._reads = getattr(self, "_reads", 0) + 1
        return f"sha256:{self._reads:064d}"


class DriftingDigestAdapter(ArithAdapter):
    """Its trajectories record a manifest digest the environment no longer reports."""

    def load(self, uri: EnvURI, context: Any = None) -> StepEnvironment:
        return DriftingDigestArith(uri.raw, size=4, seed=0)


class ScriptedChat:
    """A text policy replying from a script (a string, or a function of the `Turn`), standing in for a chat model.

    For tests that need exact replies (valid, malformed, out of range), which no real model gives on
    demand; it keeps every transcript it was shown in `seen`.
    """

    info = PolicyInfo(kind="callable", name="scripted-chat")
    speaks_text = True

    def __init__(self, reply: Any) -> None:
        """`reply`: the text to answer every turn with, or ``reply(turn) -> str``."""
        self.reply = reply
        self.seen: list[list[dict[str, Any]]] = []

    async def act(self, turn: Any) -> str:
        """Record the transcript and answer from the script."""
        self.seen.append([dict(m) for m in turn.messages])
        return self.reply(turn) if callable(self.reply) else self.reply  # type: ignore[no-any-return]


# ---------------------------------------------------------------- tools as actions


class ToolArithEnvironment(ArithEnvironment):
    """``arith:add`` with an ``add`` tool: an action is a tool call ``{"name": "add", "arguments": {"a", "b"}}``
    (its result is the next observation) or the answer text, which ends the episode.

    A double of the formats whose actions are tool calls (NeMo Gym, ORS), which core's own tests cannot
    install; it claims `tools` and records its calls through the `Session.tool_call` hook.
    """

    def __init__(self, uri: str = "arith:add?tools=1", size: int = 4, seed: int = 0) -> None:
        """Claim `tools` (and several turns: tool calls, then the answer)."""
        caps = Capabilities(
            seeded=True, stable_task_ids=True, reference_policy=True, multi_turn=True, tools=True, max_turns=4
        )
        super().__init__(uri, size=size, seed=seed, capabilities=caps)
        self.manifest = attrs.evolve(self.manifest, tools=("add",))

    def session(self, task: str | None = None, seed: int | None = None) -> ToolArithSession:
        """Open `task` (the first task when none is given)."""
        plain = super().session(task, seed)
        return ToolArithSession(self, plain.task_id or "")


class ToolArithSession(ArithSession):
    """One addition question, with an ``add`` tool the policy may call first."""

    action_type: type | tuple[type, ...] = (str, dict)

    def __init__(self, env: ArithEnvironment, task: str) -> None:
        """Start the question; no tool called yet."""
        super().__init__(env, task)
        self.last: str | None = None

    @property
    def observation(self) -> Any:
        """The question, then the last tool result."""
        return self.last or f"What is {self.a} + {self.b}?"

    def act(self, action: Any) -> Step:
        """Call the tool (an unknown tool or bad arguments is the policy's failure), or answer."""
        if isinstance(action, str):
            return super().act(action)
        if action.get("name") != "add":
            msg = f"There is no tool {action.get('name')!r}; the one tool is 'add'."
            raise PolicyFailure(msg)
        args = action.get("arguments") or {}
        try:
            total = int(args["a"]) + int(args["b"])
        except (KeyError, TypeError, ValueError) as exc:
            msg = f"add takes two integers a and b, not {args!r}."
            raise PolicyFailure(msg) from exc
        observation = self.observation
        self.last = f"add returned {total}"
        return Step(observation=observation, action=action)

    def tool_call(self, action: Any) -> tuple[str, Any] | None:
        """A dict action calls the tool it names."""
        return (str(action.get("name")), action.get("arguments")) if isinstance(action, dict) else None

    def render(self) -> list[dict[str, Any]]:
        """The question or the tool's result, as a user message."""
        return [{"role": "user", "content": self.observation}]

    def parse_action(self, text: str) -> Any:
        """A reply that is a JSON object is a tool call; anything else is the answer."""
        try:
            call = json.loads(text)
        except json.JSONDecodeError:
            return text
        return call if isinstance(call, dict) else text

    def reference_action(self) -> Any:
        """Call the tool, then answer with what it returned."""
        if self.last is None:
            return {"name": "add", "arguments": {"a": self.a, "b": self.b}}
        return self.last.rsplit(" ", 1)[-1]


# ---------------------------------------------------------------- policies that travel to worker processes
# Module-level functions, so a worker process imports them by name (the ``process`` backend's tests);
# what they do on demand (die, wait) is what no real policy does on demand.

EXIT_ON = "NENYAX_FAKE_EXIT_ON"
"""`exit_on_question` ends its whole process (exit code 7) when shown the question this variable holds."""

SLEEP_S = "NENYAX_FAKE_SLEEP_S"
"""Seconds `slow_answer` waits before answering (default 30)."""

STARTED = "NENYAX_FAKE_STARTED"
"""A file `slow_answer` appends its process id to as it starts waiting (so a test knows episodes are under way)."""


def add_up(observation: str) -> str:
    """Answer an ``arith`` question by reading the two numbers (the correct sum)."""
    a, b = observation.removeprefix("What is ").removesuffix("?").split(" + ")
    return str(int(a) + int(b))


def exit_on_question(observation: str) -> str:
    """`add_up`, except that the question named by `EXIT_ON` kills the process playing it (a worker crash)."""
    if observation == os.environ.get(EXIT_ON):
        os._exit(7)
    return add_up(observation)


async def slow_answer(observation: str) -> str:
    """`add_up` after `SLEEP_S` seconds: an episode long enough to be interrupted."""
    if os.environ.get(STARTED):
        with open(os.environ[STARTED], "a") as marks:
            marks.write(f"{os.getpid()}\n")
    await asyncio.sleep(float(os.environ.get(SLEEP_S, "30")))
    return add_up(observation)


class SkillPolicy:
    """`SkillLearner`'s policy: the reference answer on tasks whose index mod 10 is below `skill`, else a wrong one;
    an `InfraFailure` on the `broken` tasks."""

    speaks_text = False

    def __init__(self, skill: int, revision: str, broken: frozenset[str] = frozenset()) -> None:
        self.skill, self.broken = skill, broken
        self.info = PolicyInfo(kind="skill", name="skill", revision=revision)

    async def act(self, turn: Any) -> Any:
        task = turn.session.task_id
        if task in self.broken:
            msg = "the model server is down"
            raise InfraFailure(msg)
        if int(task.rsplit("/", 1)[1]) % 10 < self.skill:
            return turn.session.reference_action()
        return "wrong"


class SkillLearner:
    """A learner without a model, for the arith fake: each update adds `step` to its skill (0 to 10).

    ``fail_on_round=N`` raises KeyboardInterrupt in the N-th update (a killed run); `broken` tasks meet an
    outage in training episodes. It records the statuses each update saw (`seen`) and each restore.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        step: int = 3,
        fail_on_round: int | None = None,
        broken: Iterable[str] = (),
    ) -> None:
        self.skill, self.step, self.updates = 0, step, 0
        self.fail_on_round, self.broken = fail_on_round, frozenset(broken)
        self.seen: list[list[str]] = []
        self.restored: list[str] = []

    def policy(self) -> SkillPolicy:
        return SkillPolicy(self.skill, f"skill-{self.skill}", self.broken)

    def eval_policy(self) -> SkillPolicy:
        return SkillPolicy(self.skill, f"skill-{self.skill}")  # held-out never meets the outage

    def update(self, groups: Sequence[Group]) -> dict[str, float]:
        self.updates += 1
        if self.fail_on_round == self.updates:
            raise KeyboardInterrupt  # the run is killed in this round's update
        self.seen.append([t.status.value for g in groups for t in g.trajectories])
        self.skill = max(0, min(10, self.skill + self.step))
        return {"loss": 1.0 / self.updates}

    def save(self, directory: Path) -> str:
        (directory / "skill.json").write_text(json.dumps({"skill": self.skill}))
        return str(directory)

    def restore(self, revision: str) -> None:
        self.restored.append(revision)
        self.skill = json.loads((Path(revision) / "skill.json").read_text())["skill"]

    def close(self) -> None:
        pass


class ZeroHeavyArithEnvironment(ArithEnvironment):
    """Every even-numbered task asks 0 + 0: the constant answer '0' scores about 0.5 over many tasks."""

    def operands(self, task: str) -> tuple[int, int]:
        """0 and 0 for an even index, else the usual pair."""
        return (0, 0) if int(task.rsplit("/", 1)[1]) % 2 == 0 else super().operands(task)


class ZeroHeavyArithAdapter(ArithAdapter):
    """Loads `ZeroHeavyArithEnvironment` (a floor that a small sample can misjudge)."""

    def load(self, uri: EnvURI, context: Any = None) -> StepEnvironment:
        env = super().load(uri, context)
        return ZeroHeavyArithEnvironment(uri.raw, size=env.size, seed=env.seed)  # type: ignore[attr-defined]


def answer_is_even(trajectory: Any) -> bool:
    """A judge written as a plain function (`--judge nenyax_testsupport.fakes:answer_is_even`): the last
    action is an even number (an answer that is no number fails)."""
    answer = str(trajectory.steps[-1].action).strip() if trajectory.steps else ""
    return answer.lstrip("-").isdigit() and int(answer) % 2 == 0


def passed_natively(trajectory: Any) -> bool:
    """A judge that passes exactly what the format's own verifier passed (the tier under it is the native one)."""
    return bool(trajectory.judgment is not None and trajectory.judgment.passed)


class FirstInOrder:
    """A group judge written in Python (`--judge nenyax_testsupport.fakes:FirstInOrder`): the answer first in
    alphabetical order scores 1, the rest of its group 0."""

    def judge_group(self, trajectories: Any, reference: Any) -> list[Judgment]:
        answers = [str(t.steps[-1].action) if t.steps else "" for t in trajectories]
        said = f"judged in a group of {len(answers)}"
        return [Judgment(score=float(a == min(answers)), feedback=said, judge="first-in-order") for a in answers]


def not_a_verdict(trajectory: Any) -> str:
    """A judge function that returns something no judgment can be made of."""
    return "maybe"


def answered_wrong(trajectory: Any) -> bool:
    """A judge that passes exactly what the arith fake's verifier fails: `SkillPolicy`'s ``"wrong"``."""
    return bool(trajectory.steps[-1].action == "wrong")


def short_reply(trajectory: Any) -> float:
    """A judge of style alone: 1 for a last reply of at most 40 characters, else 0."""
    text = trajectory.steps[-1].text if trajectory.steps else None
    return float(len(text or "") <= 40)
