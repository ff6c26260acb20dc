"""One evaluation, whoever asks: ``nenyax eval`` and `evaluate` are this module.

An evaluation plays N tasks x K samples into a run directory (`rundirs`: ``run.toml``,
``trajectories.jsonl``, ``summary.json``): each episode is appended as it ends, the summary is tallied
as episodes end (no trajectory is kept in memory), and a killed run is finished with ``resume=``, each
(task, sample) exactly once. `Evaluation.start` does everything before the first episode (settings
checked, backend found, environment loaded, directory made or read), so a caller can say what is about
to happen and show progress; `Evaluation.run` plays and summarises. `evaluate` is both in one call, and
works inside a running event loop (a notebook) too.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs

from nenyax.core.contract.events import EpisodeEnded, Observer
from nenyax.core.contract.trajectory import Trajectory, new_id
from nenyax.core.engine.environment import Environment
from nenyax.core.engine.executors import Executor, Job, executor_for
from nenyax.core.engine.judging import Judging
from nenyax.core.engine.loader import load
from nenyax.core.engine.policies import BUILTIN_POLICIES, POLICY_ALIASES, as_policy
from nenyax.core.engine.rundirs import TRAJECTORIES, create_run, default_run_path, read_config, write_summary
from nenyax.core.engine.runner import run_jobs
from nenyax.core.engine.settings import EvalSettings, ModelSettings, PolicySettings
from nenyax.core.engine.sinks import JsonlSink, read_trajectories
from nenyax.core.engine.summary import Summary, Tally
from nenyax.core.engine.sync import run_sync
from nenyax.core.errors import UsageError
from nenyax.core.models.endpoint import Endpoint

FREE_ON_RESUME = frozenset({"concurrency"})
"""Settings a resumed run may change without changing what it measures."""

PYTHON_POLICY = "python:"
"""How run.toml names a policy that is a Python object (``python:module.qualname``): it cannot be rebuilt
from the file, so resuming such a run takes the same object again (``policy=``)."""


class SettingsDiffer(UsageError):
    """Resuming a run with settings other than those its run.toml holds."""

    def __init__(self, run_dir: Path, changed: Sequence[str]) -> None:
        self.run_dir = run_dir
        self.changed = tuple(changed)
        super().__init__(
            f"{run_dir}/run.toml describes another run: it differs in {', '.join(self.changed)}. Resume it with "
            "its own settings, or start a new run in another directory."
        )


@attrs.frozen(kw_only=True)
class EvalResult:
    """A finished evaluation: where it is, what it ran, and its figures (`load_run` reads the same back)."""

    run_dir: Path
    settings: EvalSettings
    summary: Summary


class _Tallying(Observer):
    """Counts each episode as it ends (after the sink wrote it), so the run keeps no trajectory."""

    def __init__(self, tally: Tally) -> None:
        self.tally = tally

    def on_episode_ended(self, event: EpisodeEnded) -> None:
        self.tally.add(event.trajectory)


class Evaluation:
    """An evaluation ready to play: its directory made (or read, to resume) and its missing episodes known."""

    def __init__(
        self,
        *,
        settings: EvalSettings,
        run_dir: Path,
        env: Environment,
        player: Any,
        executor: Executor,
        jobs: list[Job],
        recorded: list[Trajectory],
        cut_off: str | None,
        task_count: int,
        owns_env: bool = True,
        judging: Judging | None = None,
    ) -> None:
        self.settings = settings
        self.judging = judging
        """The judges put on the environment, built (None: its own verifier alone)."""
        self.run_dir = run_dir
        self.env = env
        self.player = player
        """Who plays: an `Endpoint`, a built-in policy's name, or the caller's policy object."""
        self.executor = executor
        self.jobs = jobs
        """The episodes still to play, each (task, sample) once."""
        self.recorded = len(recorded)
        """Episodes already on disk (a resumed run)."""
        self.cut_off = cut_off
        """The sentence saying a last line a killed writer cut off (that episode is played again), or None."""
        self.task_count = task_count
        self._owns_env = owns_env
        """Whether this evaluation loaded the environment (and so closes it); one the caller gave stays open."""
        self._tally = Tally(threshold=settings.pass_threshold)
        for traj in recorded:
            self._tally.add(traj)

    @classmethod
    def start(
        cls,
        settings: EvalSettings | None = None,
        *,
        out: str | Path | None = None,
        resume: str | Path | None = None,
        policy: Any = None,
        env: Environment | None = None,
        backend: str | Executor | None = None,
        workers: int | None = None,
        address: str | None = None,
    ) -> Evaluation:
        """Everything before the first episode; a mistake is one `UsageError` before any directory is made.

        A new run needs `settings` (`out` defaults to ``runs/<time>-<env>``); ``resume=DIR`` finishes the
        run in DIR with the settings its run.toml holds (`settings`, when given, must be the same but for
        `FREE_ON_RESUME`). `policy` is a Python policy object to play with, recorded by name (a run played
        by one is resumed by passing it again). `env` is the environment already loaded (its URI the
        settings'); None loads it. `backend`, `workers` and `address` say where episodes run.
        """
        # Made first: a backend that is not installed is one sentence before the run directory exists.
        executor = executor_for(backend, workers=workers, address=address)
        if resume is not None:
            if out is not None:
                msg = "A resumed run stays in its own directory; name it with resume= alone, not out= too."
                raise UsageError(msg)
            run_dir = Path(resume)
            settings = _resumed(run_dir, settings)
        elif settings is None:
            msg = "Say what to evaluate: EvalSettings(uri=...), or resume= a run directory."
            raise UsageError(msg)
        else:
            run_dir = Path(out) if out is not None else default_run_path("runs", settings.uri)
        player = _player(settings, policy)
        judging = Judging.build(settings.judges, settings.score)  # a mistake: one sentence, no directory made
        owns_env = env is None
        if env is None:
            env = load(settings.uri)
        elif env.uri != settings.uri:
            msg = f"The environment given is {env.uri}; the run's settings name {settings.uri}."
            raise UsageError(msg)
        try:
            ids = list(settings.task_ids) if settings.task_ids else env.task_ids(limit=settings.tasks)
            jsonl = run_dir / TRAJECTORIES
            recorded: list[Trajectory] = []
            cut_off = None
            if resume is None:
                create_run(
                    run_dir,
                    settings.to_table(),
                    env.manifest,
                    extra={"task_count": len(ids)},
                    if_taken=f"name a new directory, or finish that run by resuming {run_dir}",
                )
            elif jsonl.exists():
                found = read_trajectories(jsonl, warn=False)  # the caller says it, in its own words
                recorded = list(found)
                cut_off = found.cut_off_note
        except BaseException:
            if owns_env:
                env.close()
            raise
        return cls(
            settings=settings,
            run_dir=run_dir,
            env=env,
            player=player,
            executor=executor,
            jobs=missing_jobs(ids, settings.samples, recorded),
            recorded=recorded,
            cut_off=cut_off,
            task_count=len(ids),
            owns_env=owns_env,
            judging=judging,
        )

    async def arun(self, observers: Iterable[Any] = ()) -> EvalResult:
        """Play the missing episodes, then write and return the summary; an environment it loaded is closed after.

        `observers` get every episode's events after the run's sink has written the episode. On Ctrl-C
        every finished episode is already on disk (resume the run to finish it).
        """
        try:
            started = time.perf_counter()
            with JsonlSink(self.run_dir / TRAJECTORIES) as sink:
                pol = as_policy(self.player)
                try:
                    await run_jobs(
                        self.env,
                        pol,
                        self.jobs,
                        concurrency=self.settings.concurrency,
                        sink=sink,
                        timeout=self.settings.timeout,
                        observers=[_Tallying(self._tally), *observers],
                        keep=False,
                        backend=self.executor,
                        judging=self.judging,
                    )
                finally:
                    aclose = getattr(pol, "aclose", None)
                    if aclose is not None:
                        await aclose()
                    if self.judging is not None:
                        await self.judging.aclose()
            wall = time.perf_counter() - started
        finally:
            self.close()
        summary = self._tally.summary(samples=self.settings.samples, wall_s=wall, resumed=self.recorded)
        write_summary(self.run_dir, summary)
        return EvalResult(run_dir=self.run_dir, settings=self.settings, summary=summary)

    def run(self, observers: Iterable[Any] = ()) -> EvalResult:
        """Synchronous `arun` (inside a running event loop too)."""
        return run_sync(self.arun(observers))

    def close(self) -> None:
        """Close the environment this evaluation loaded (`run` does, once played)."""
        if self._owns_env:
            self.env.close()


def evaluate(
    env: str | Environment | EvalSettings | None = None,
    policy: Any = None,
    *,
    tasks: int | None = None,
    task_ids: Sequence[str] | None = None,
    samples: int | None = None,
    concurrency: int | None = None,
    timeout: float | None = None,
    pass_threshold: float | None = None,
    out: str | Path | None = None,
    resume: str | Path | None = None,
    backend: str | Executor | None = None,
    workers: int | None = None,
    address: str | None = None,
    observers: Iterable[Any] = (),
    judges: Sequence[str] | None = None,
    score: str | None = None,
) -> EvalResult:
    """What ``nenyax eval`` does, from Python: ``evaluate("reasoning_gym:basic_arithmetic", "reference", tasks=8)``.

    `env` is a URI, a loaded `Environment` or `EvalSettings`; `policy` an `Endpoint`, a model name
    (``"openai:gpt-4.1-mini"``), a built-in policy's name (``"reference"``), any policy object, or None for
    the embedded model. `judges` (each ``NAME[?options]``) judge every episode beside the format's own
    verifier, its score composed as `score` says (`nenyax.core.engine.judging`). The run
    directory, its resume (``resume=DIR``, the other settings then read from its run.toml) and its summary
    are those of the command, which calls the same code.
    """
    given: dict[str, Any] = {
        k: v
        for k, v in (
            ("tasks", tasks),
            ("task_ids", tuple(task_ids) if task_ids is not None else None),
            ("samples", samples),
            ("concurrency", concurrency),
            ("timeout", timeout),
            ("pass_threshold", pass_threshold),
            ("judges", tuple(judges) if judges is not None else None),
            ("score", score),
        )
        if v is not None
    }
    loaded = env if isinstance(env, Environment) else None
    uri = loaded.uri if loaded is not None else env if isinstance(env, str) else None
    settings: EvalSettings | None
    if isinstance(env, EvalSettings):
        if set(given) - FREE_ON_RESUME:
            msg = f"Pass {', '.join(sorted(given))} inside the EvalSettings, not beside them."
            raise UsageError(msg)
        settings = attrs.evolve(env, **given)
    elif resume is not None:
        # The run's own settings, with what was given over them: `Evaluation.start` names any that differ.
        overlay: dict[str, Any] = {
            **given,
            **({"provider": None, "policy": None, **_who_plays(policy)} if policy is not None else {}),
        }
        if uri:
            overlay["uri"] = uri
        settings = attrs.evolve(_read_settings(Path(resume)), **overlay)
    elif uri is None:
        msg = "Name the environment to evaluate (a URI), or resume= a run directory."
        raise UsageError(msg)
    else:
        settings = EvalSettings(uri=uri, **given, **_who_plays(policy))
    python_policy = None if isinstance(policy, str | Endpoint) or policy is None else policy
    endpoint = policy if isinstance(policy, Endpoint) else None
    evaluation = Evaluation.start(
        settings,
        out=out,
        resume=resume,
        policy=python_policy or endpoint,
        env=loaded,
        backend=backend,
        workers=workers,
        address=address,
    )
    return evaluation.run(observers)


def missing_jobs(ids: Sequence[str], samples: int, done: Sequence[Trajectory]) -> list[Job]:
    """Every (task, sample) not yet recorded, each task's samples under the group id it already has."""
    seen = {(t.task_id, t.sample) for t in done}
    groups = {t.task_id: t.group_id for t in done if t.group_id is not None}
    jobs: list[Job] = []
    for task in ids:
        group_id = groups.get(task) or (new_id() if samples > 1 else None)
        jobs.extend(Job(task, group_id, k) for k in range(samples) if (task, k) not in seen)
    return jobs


def _who_plays(policy: Any) -> dict[str, Any]:
    """The ``provider`` or ``policy`` setting of what `evaluate` was handed."""
    if policy is None:
        return {}
    if isinstance(policy, Endpoint):
        return {"provider": ModelSettings.of(policy)}
    if isinstance(policy, str):
        name = POLICY_ALIASES.get(policy, policy)
        if name in BUILTIN_POLICIES:
            return {"policy": PolicySettings(use=name)}
        if ":" in policy:
            return {"provider": ModelSettings.named(policy)}
        as_policy(policy)  # an unknown name: its sentence, with did-you-mean
    return {"policy": PolicySettings(use=PYTHON_POLICY + _qualified_name(policy))}


def _qualified_name(obj: Any) -> str:
    target = obj if callable(obj) and hasattr(obj, "__qualname__") else type(obj)
    return f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', type(obj).__name__)}"


def _player(settings: EvalSettings, policy: Any) -> Any:
    """Who plays the run: the caller's object where it gave one, else what the settings name."""
    named = settings.policy.use if settings.policy is not None else None
    if named is not None and named.startswith(PYTHON_POLICY):
        if policy is None:
            msg = f"This run is played by the Python policy {named[len(PYTHON_POLICY) :]}; pass it again as policy=."
            raise UsageError(msg)
        return policy
    if isinstance(policy, Endpoint):
        player: Any = policy
    elif policy is not None:
        msg = f"These settings name who plays ({settings.player}); pass policy= only for a Python policy object."
        raise UsageError(msg)
    elif named is not None:
        as_policy(named)  # an unknown name: one sentence, before the run directory exists
        return named
    else:
        player = (settings.provider or ModelSettings.named(None)).endpoint()
    player.provider  # noqa: B018 - a missing or misconfigured provider fails here, before any episode
    return player


def _read_settings(run_dir: Path) -> EvalSettings:
    config = read_config(run_dir)
    where = f"{run_dir}/run.toml"
    wrote = config.settings.get("command", "eval")  # runs written before the key existed are eval's
    if wrote != "eval":
        msg = f"{run_dir} holds a run of `nenyax {wrote}`; only an evaluation can be resumed."
        raise UsageError(msg)
    return EvalSettings.from_table(dict(config.settings), where)


def _resumed(run_dir: Path, settings: EvalSettings | None) -> EvalSettings:
    """The settings of the run in `run_dir`; `settings`, when given, must match them but for `FREE_ON_RESUME`."""
    stored = _read_settings(run_dir)
    if settings is None:
        return stored
    mine, theirs = attrs.asdict(settings, recurse=False), attrs.asdict(stored, recurse=False)
    changed = sorted(
        k for k in mine if k not in FREE_ON_RESUME | {"unknown_fields", "schema_version"} and mine[k] != theirs[k]
    )
    if changed:
        raise SettingsDiffer(run_dir, changed)
    # What the file held that this version does not know travels on (the record rule).
    return attrs.evolve(settings, unknown_fields=stored.unknown_fields)
