"""One episode on a served environment: OpenEnv's reset/step/state on a Nenyax session.

The episode follows the rules of Nenyax's own step loop (`nenyax.core.rollout`), so a served
environment is judged exactly as it is in-process: the session is judged when it reports done (or
reaches the manifest's ``max_turns``), an action the environment rejects ends the episode as
``policy_error`` scored 0, and an environment, verifier or infrastructure failure is answered with
an error frame and never a reward.
"""

from __future__ import annotations

import contextlib
import uuid
from typing import Any

from nenyax.core import (
    InfraFailure,
    Judgment,
    PolicyFailure,
    PolicyInfo,
    Session,
    Status,
    Step,
    Trajectory,
    UnsupportedPolicyError,
    UsageError,
    VerifierFailure,
)
from nenyax.server.openenv import schemas
from nenyax.server.openenv.served import SLOW_CALL_S, ServedEnvironment, clock
from nenyax.server.openenv.wire import EXECUTION_ERROR, VALIDATION_ERROR, WireError, check_keys, error_item, invalid

MAX_SEED = 2**63 - 1

_RESET_KEYS = ("seed", "episode_id", "task_id", "split", "index")


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _judgment(judgment: Judgment) -> dict[str, Any]:
    return {
        "score": judgment.score,
        "passed": judgment.passed,
        "components": dict(judgment.components),
        "feedback": judgment.feedback,
        "judge": judgment.judge,
    }


def _reset_args(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise invalid([error_item("dict_type", ("data",), "Input should be a valid dictionary", data)])
    errors = []
    seed, episode_id, task_id, split, index = (data.get(key) for key in _RESET_KEYS)
    if seed is not None and (type(seed) is not int or not 0 <= seed <= MAX_SEED):
        errors.append(error_item("int_type", ("seed",), f"Input should be an integer from 0 to {MAX_SEED}", seed))
    if episode_id is not None and (not isinstance(episode_id, str) or len(episode_id) > 255):
        errors.append(
            error_item("string_type", ("episode_id",), "Input should be a string of at most 255 characters", episode_id)
        )
    for key, value in (("task_id", task_id), ("split", split)):
        if value is not None and not isinstance(value, str):
            errors.append(error_item("string_type", (key,), "Input should be a valid string", value))
    if index is not None and (type(index) is not int or index < 0):
        errors.append(error_item("int_type", ("index",), "Input should be a non-negative integer", index))
    if errors:
        raise invalid(errors)
    return {"seed": seed, "episode_id": episode_id, "task_id": task_id, "split": split, "index": index}


def no_episode(over: str | None, reset: str = "a reset") -> WireError:
    """The answer to a step with no episode to take it: one that ended with status `over`, or none started."""
    if over is not None:
        return WireError(VALIDATION_ERROR, f"The episode is over ({over}): send a reset to start the next one.")
    return WireError(VALIDATION_ERROR, f"No episode in progress: send {reset} first.")


class Episode:
    """The episode of one OpenEnv session (a WebSocket connection, an MCP session or one HTTP request)."""

    __slots__ = (
        "_renders",
        "done",
        "episode_id",
        "last",
        "seed",
        "served",
        "session",
        "status",
        "steps",
        "task_id",
    )

    def __init__(self, served: ServedEnvironment) -> None:
        """An episode slot with nothing started yet: the first message must be a reset."""
        self.served = served
        self.session: Session | None = None
        self.steps: list[Step] = []
        self.episode_id: str | None = None
        self.task_id: str | None = None
        self.seed: int | None = None
        self.status: str | None = None
        self.done = False
        self._renders = served.renders
        self.last: dict[str, Any] | None = None  # the latest reset or step result: MCP's `observe` returns it

    @property
    def started(self) -> bool:
        """True once a reset opened an episode (finished or not)."""
        return self.episode_id is not None

    # ---- reset

    async def reset(self, data: Any) -> dict[str, Any]:
        """Close any episode in progress and start the one `data` asks for (task_id, split+index, seed)."""
        args = _reset_args(data)
        await self.aclose()
        served = self.served
        task = args["task_id"]
        try:
            if task is None and args["index"] is not None:
                ids = await served.run(served.env.task_ids, args["split"], args["index"] + 1)
                if args["index"] >= len(ids):
                    msg = f"Task index {args['index']} is out of range: the split has {len(ids)} tasks."
                    raise WireError(VALIDATION_ERROR, msg)
                task = ids[args["index"]]
            if served.sync_session:
                session = await served.run(served.env.session, task, args["seed"])
            else:
                session = await served.env.asession(task=task, seed=args["seed"])
        except WireError:
            raise
        except UsageError as exc:  # an unknown task id or split: the client's mistake, said in one sentence
            raise WireError(VALIDATION_ERROR, str(exc)) from exc
        except Exception as exc:
            raise WireError(
                EXECUTION_ERROR, f"The environment failed to start an episode: {_describe(exc)}", status="env_error"
            ) from exc
        self.session = session
        self.steps = []
        self.episode_id = args["episode_id"] or uuid.uuid4().hex
        self.task_id = session.task_id
        self.seed = session.seed
        self.status = None
        self.done = False
        self._renders = served.renders
        # No episode_id in observations (it is in the state): a random id would make two replays of the
        # same seed differ (nenyax check through nenyax-adapters-openenv compares them).
        metadata = {"task_id": self.task_id, "seed": self.seed}
        if session.done:  # an environment whose episode is over before any action: judge it now
            return await self._finish(None, metadata)
        return self._result(session.observation, None, False, metadata)

    # ---- step

    def _action(self, data: Any) -> tuple[Any, str | None]:
        """The action in a step message's data, and the text it was parsed from (if any)."""
        served = self.served
        field = served.field
        if type(data) is dict and len(data) == 1 and field in data:  # the common case, checked cheaply
            value = data[field]
        else:
            if not isinstance(data, dict):
                raise invalid([error_item("dict_type", ("data",), "Input should be a valid dictionary", data)])
            check_keys(data, served.action_keys)
            if field in data:
                value = data[field]
            elif "message" in data:
                field, value = "message", data["message"]
            else:
                raise invalid([error_item("missing", (field,), "Field required", data)])
            if "action" in data and "message" in data:
                raise invalid(
                    [error_item("value_error", ("message",), "Send either action or message, not both", data)]
                )
        if field == "message" and not isinstance(value, str):
            raise invalid([error_item("string_type", ("message",), "Input should be a valid string", value)])
        if field == "message" and served.kind == schemas.NATIVE:
            return None, value
        return value, None

    async def step(self, data: Any) -> dict[str, Any]:
        """Apply the action in `data`; the final step carries the judgment in its metadata."""
        session = self.session
        if session is None or self.done:
            raise no_episode(self.status if self.done else None)
        served = self.served
        field = served.field
        # The hot path (one known field, a well-typed value) is checked inline; `_action` does the rest.
        if type(data) is dict and len(data) == 1 and field in data and (served.native or type(data[field]) is str):
            action, text = data[field], None
        else:
            action, text = self._action(data)
        if text is not None:
            try:
                action = session.parse_action(text)
            except PolicyFailure as exc:
                return await self._policy_failure(exc, text)
            except Exception as exc:  # noqa: BLE001 - a parser that crashes is the adapter's bug, not the model's
                await self._fail("env_error", exc)
        try:
            if served.async_act:
                step = await session.aact(action)
            elif served.offload:
                step = await served.run(session.act, action)
            else:
                served.calls += 1
                started = clock()
                step = session.act(action)
                if clock() - started > SLOW_CALL_S:
                    served.slow_call()
        except PolicyFailure as exc:  # the environment rejected the action: the policy's failure, scored 0
            return await self._policy_failure(exc, text)
        except VerifierFailure as exc:
            await self._fail("verifier_error", exc)
        except InfraFailure as exc:
            await self._fail("infra_error", exc)
        except Exception as exc:  # noqa: BLE001 - whatever the environment's step raises is its failure
            await self._fail("env_error", exc)
        if text is not None:
            step = Step(
                observation=step.observation,
                action=step.action,
                reward=step.reward,
                terminated=step.terminated,
                truncated=step.truncated,
                info=step.info,
                text=text,
            )
        steps = self.steps
        steps.append(step)
        count = len(steps)
        metadata: dict[str, Any] = {"step": count, "info": step.info} if step.info else {"step": count}
        if session.done or count >= served.max_turns:
            return await self._finish(step, metadata)
        if self._renders:
            return self._result(session.observation, step.reward, False, metadata)
        obs = {"observation": session.observation, "task_id": self.task_id, "step": count, "metadata": metadata}
        result = self.last = {"observation": obs, "reward": step.reward, "done": False, "metadata": metadata}
        return result

    def _result(self, observation: Any, reward: Any, done: bool, metadata: dict[str, Any]) -> dict[str, Any]:
        obs: dict[str, Any] = {"observation": observation, "task_id": self.task_id, "step": len(self.steps)}
        if not done and self._renders:
            try:
                obs["messages"] = self.session.render()  # type: ignore[union-attr]
            except Exception as exc:  # noqa: BLE001 - no usable text codec here: numeric clients still play
                self._renders = False
                metadata["messages_error"] = _describe(exc)
        obs["metadata"] = metadata
        result = self.last = {"observation": obs, "reward": reward, "done": done, "metadata": metadata}
        return result

    async def _finish(self, step: Step | None, metadata: dict[str, Any]) -> dict[str, Any]:
        """Judge the finished episode and build the final observation (reward = the judgment's score)."""
        session = self.session
        assert session is not None
        observation = session.observation
        try:
            judgment = await self._judge(session)
        except Exception as exc:  # noqa: BLE001 - never a made-up score for a verifier that failed
            await self._fail("verifier_error", exc)
        self.status = Status.OK.value
        self.done = True
        await self._close_session()
        if step is not None:
            metadata["terminated"] = step.terminated
            metadata["truncated"] = step.truncated or not step.done  # cut at max_turns counts as truncated
            metadata["step_reward"] = step.reward
        metadata.update(
            task_id=self.task_id,
            seed=self.seed,
            status=self.status,
            judgment=_judgment(judgment),
        )
        return self._result(observation, judgment.score, True, metadata)

    async def _judge(self, session: Session) -> Judgment:
        """The session's own judge, or its trajectory judge on the episode so far (as Nenyax's loop does)."""
        served = self.served
        judge = getattr(session, "trajectory_judge", None)
        if judge is None:
            return await served.run(session.judge, tuple(self.steps))  # type: ignore[no-any-return]
        env = served.env
        trajectory = Trajectory(
            env_uri=env.uri,
            manifest_digest=env.digest,
            mode=env.manifest.mode,
            task_id=self.task_id,
            seed=self.seed,
            policy=PolicyInfo(kind="remote", name="an OpenEnv client of nenyax serve"),
            status=Status.OK,
            judgment=None,
            steps=tuple(self.steps),
        )
        return await served.run(judge.judge_trajectory, trajectory, session.judge_reference)  # type: ignore[no-any-return]

    async def _policy_failure(self, exc: Exception, text: str | None) -> dict[str, Any]:
        session = self.session
        assert session is not None
        observation = session.observation
        self.steps.append(Step(observation=None, action=None, text=text, info={"error": str(exc)}))
        judgment = Judgment(score=0.0, passed=False, feedback=str(exc), judge="nenyax:policy_error")
        self.status = Status.POLICY_ERROR.value
        self.done = True
        await self._close_session()
        metadata = {
            "step": len(self.steps),
            "task_id": self.task_id,
            "seed": self.seed,
            "status": self.status,
            "error": str(exc),
            "judgment": _judgment(judgment),
        }
        return self._result(observation, 0.0, True, metadata)

    async def _fail(self, status: str, exc: BaseException) -> None:
        """End the episode unjudged and raise the error frame that says why."""
        self.status = status
        self.done = True
        await self._close_session()
        raise WireError(EXECUTION_ERROR, _describe(exc), status=status) from exc

    # ---- state and close

    def state(self) -> dict[str, Any]:
        """OpenEnv's State fields plus the task, seed and status (and the oracle's action, when shared)."""
        state: dict[str, Any] = {
            "episode_id": self.episode_id,
            "step_count": len(self.steps),
            "task_id": self.task_id,
            "seed": self.seed,
            "done": self.done,
            "status": self.status,
        }
        if self.served.reference:
            state["reference"] = self._reference()
        return state

    def _reference(self) -> dict[str, Any] | None:
        """The oracle's action for the current observation, as a wire action (None between episodes)."""
        session = self.session
        if session is None or self.done:
            return None
        try:
            action = session.reference_action()
        except UnsupportedPolicyError:  # this task has no reference (a dataset row without its gold answer)
            return None
        return {self.served.field: action}

    async def _close_session(self) -> None:
        session, self.session = self.session, None
        if session is not None:
            with contextlib.suppress(Exception):  # a failed close does not undo a judged episode
                await session.aclose()

    async def aclose(self) -> None:
        """Close the session in progress, if any (its episode is left unjudged)."""
        await self._close_session()
