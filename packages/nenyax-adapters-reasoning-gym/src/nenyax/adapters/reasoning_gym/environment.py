"""A reasoning-gym dataset as a single-turn step environment with its native verifier."""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import io
import random
from typing import TYPE_CHECKING, Any

import reasoning_gym
from nenyax.adapters.reasoning_gym.reference import reference_answer
from nenyax.core import MAX_SEED, JudgeCapabilities, Judgment, Manifest, Mode, Split, StepEnvironment
from nenyax.core.errors import BadURIError, VerifierFailure
from nenyax.core.toolkit.qa import ANSWER_RULES, QuestionSession, question_capabilities, quoted
from reasoning_gym.composite import DatasetSpec as RGSpec
from reasoning_gym.utils import SYSTEM_PROMPTS

if TYPE_CHECKING:
    from nenyax.adapters.reasoning_gym.options import DatasetSpec

# Puzzles with many valid answers and no example one in the metadata: only a solver could answer.
NO_REFERENCE = frozenset({"boxnet", "rush_hour"})
# Datasets whose generation iterates sets, so entries depend on PYTHONHASHSEED across processes.
HASH_SEED_SENSITIVE = frozenset(
    {"isomorphic_strings", "knight_swap", "polynomial_multiplication", "ransom_note", "word_ladder"}
)
RG_VERSION = importlib.metadata.version("reasoning-gym")


def _decimal(text: str) -> bool:
    return text.isascii() and text.isdecimal()


def _quiet(fn: Any, *args: Any, **kwargs: Any) -> Any:
    # Some generators (bf) print while generating; keep stdout for the user's output.
    with contextlib.redirect_stdout(io.StringIO()):
        return fn(*args, **kwargs)


class ReasoningGymEnvironment(StepEnvironment):
    """One dataset (or a weighted composite) at a fixed seed and size; task ids ``<target>/<seed>/<index>``."""

    def __init__(self, uri: str, spec: DatasetSpec) -> None:
        """Create the dataset now, so bad config values fail at load time with reasoning-gym's reason."""
        self.spec = spec
        if spec.prompt not in SYSTEM_PROMPTS:
            msg = f"Unknown prompt {spec.prompt!r}; choose one of {', '.join(sorted(SYSTEM_PROMPTS))}."
            raise BadURIError(msg)
        self.system_prompt = SYSTEM_PROMPTS[spec.prompt]
        self._datasets: dict[int, Any] = {}
        # Several checks and policies replay the same task; some entries take seconds to generate.
        self.entry = functools.lru_cache(maxsize=512)(self._generate)
        first = self.dataset(spec.seed)
        has_reference = not (NO_REFERENCE & set(spec.names))
        super().__init__(
            Manifest(
                uri=uri,
                format="reasoning_gym",
                format_version=RG_VERSION,
                mode=Mode.STEP,
                name=spec.target,
                description=(type(first).__doc__ or "").strip().splitlines()[0] if type(first).__doc__ else "",
                splits=(Split(name="all", count=spec.size),),
                observation="The question, as text.",
                action=ANSWER_RULES,
                score_range=(0.0, 1.0),
                extra={
                    "seed": spec.seed,
                    "size": spec.size,
                    "datasets": list(spec.names),
                    "config": spec.config,
                    "weights": spec.weights if len(spec.names) > 1 else {},
                    "prompt": spec.prompt,
                    "pythonhashseed_sensitive": sorted(HASH_SEED_SENSITIVE & set(spec.names)),
                },
                capabilities=question_capabilities(seeded=True, reference_policy=has_reference),
            )
        )

    def dataset(self, seed: int) -> Any:
        """The reasoning-gym dataset at `seed` (made once per seed)."""
        if seed not in self._datasets:
            spec = self.spec
            try:
                if len(spec.names) == 1:
                    name = spec.names[0]
                    ds = _quiet(reasoning_gym.create_dataset, name, seed=seed, size=spec.size, **spec.config[name])
                else:
                    parts = [RGSpec(n, spec.weights[n], spec.config[n]) for n in spec.names]
                    ds = _quiet(reasoning_gym.create_dataset, "composite", seed=seed, size=spec.size, datasets=parts)
            except (TypeError, ValueError, AssertionError) as exc:
                msg = f"reasoning-gym rejected the configuration of {spec.target!r}: {exc or type(exc).__name__}."
                raise BadURIError(msg) from exc
            self._datasets[seed] = ds
        return self._datasets[seed]

    def _generate(self, seed: int, index: int) -> dict[str, Any]:
        """The generated entry (question, answer, metadata) at `index` of the dataset at `seed`."""
        entry: dict[str, Any] = _quiet(self.dataset(seed).__getitem__, index)  # reasoning-gym is untyped
        return entry

    def task_ids(self, split: str | None = None, limit: int | None = None) -> list[str]:
        """``<target>/<seed>/<index>`` for every index of the dataset at the URI's seed."""
        if split not in (None, "all"):
            msg = f"{self.uri} has one split, 'all'; there is no {split!r}."
            raise BadURIError(msg)
        count = self.spec.size if limit is None else min(limit, self.spec.size)
        return [f"{self.spec.target}/{self.spec.seed}/{i}" for i in range(count)]

    def parse_task(self, task: str) -> tuple[int, int]:
        """Split a task id into (seed, index), refusing ids of another dataset or out of range."""
        target, _, rest = task.rpartition("/")
        target, _, seed_text = target.rpartition("/")
        if target != self.spec.target or not _decimal(seed_text) or not _decimal(rest) or int(seed_text) > MAX_SEED:
            msg = f"{task!r} is not a task of {self.uri}; its ids look like '{self.spec.target}/{self.spec.seed}/0'."
            raise BadURIError(msg)
        index = int(rest)
        if index >= self.spec.size:
            msg = f"Task index {index} is out of range: {self.uri} has {self.spec.size} tasks (size={self.spec.size})."
            raise BadURIError(msg)
        return int(seed_text), index

    def session(self, task: str | None = None, seed: int | None = None) -> ReasoningGymSession:
        """Open `task`; without one, the task picked by `seed` (or the first task)."""
        if task is not None:
            data_seed, index = self.parse_task(task)
        else:
            data_seed = self.spec.seed
            index = 0 if seed is None else random.Random(seed).randrange(self.spec.size)
        return ReasoningGymSession(self, data_seed, index)


class NativeScorer:
    """reasoning-gym's own verifier as an answer judge: the reference is the generated entry."""

    capabilities = JudgeCapabilities(answer=True)

    def __init__(self, env: ReasoningGymEnvironment, seed: int) -> None:
        """Judge with the scorer of the dataset at `seed` (a composite delegates to the entry's own dataset)."""
        self.dataset = env.dataset(seed)
        self.target = env.spec.target

    def judge(self, answer: str, reference: dict[str, Any]) -> Judgment:
        """The native score; passed when it is 1."""
        source = reference["metadata"].get("source_dataset", self.target)
        try:
            score = float(_quiet(self.dataset.score_answer, answer, reference))
        except Exception as exc:
            msg = f"The {source} scorer raised {type(exc).__name__}: {exc}"
            raise VerifierFailure(msg) from exc
        gold = reference.get("answer")
        expected = f"expected {gold!r}" if gold is not None else "checked by the dataset's verifier"
        return Judgment(
            score=score,
            passed=score >= 1.0,
            components={"native": score},
            feedback=f"answered {quoted(answer)}, {expected}",
            judge=f"reasoning_gym:{source}",
        )


class ReasoningGymSession(QuestionSession):
    """One generated question, judged by the dataset's own scorer."""

    def __init__(self, env: ReasoningGymEnvironment, seed: int, index: int) -> None:
        """Generate the entry (cached per environment)."""
        self.entry = env.entry(seed, index)
        self.index = index
        source = self.entry["metadata"].get("source_dataset", env.spec.target)
        gold = reference_answer(self.entry) if env.manifest.capabilities.reference_policy else None
        super().__init__(
            task_id=f"{env.spec.target}/{seed}/{index}",
            seed=seed,
            question=str(self.entry["question"]),
            system_prompt=env.system_prompt,
            judge=NativeScorer(env, seed),
            judge_name=f"reasoning_gym:{source}",
            references=[self.entry],
            gold=gold,
            why_no_gold=f"{source} has no reference answer (it needs a solver).",
        )
