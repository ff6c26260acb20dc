"""`NenyaxEnvGroupBuilder`: G episodes of one Nenyax task and seed, as tinker-cookbook's `EnvGroupBuilder`.

The builder holds only strings and numbers, so it pickles to the cookbook's rollout workers (its docs require
it); the environment, the tokenizer and the renderer are built where `make_envs` runs, once per process. The
group shares the task and the seed, so every member starts from the same state and GRPO's baseline is fair.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tinker_cookbook.renderers import Renderer, get_renderer
from tinker_cookbook.rl.types import Env, EnvGroupBuilder, Metrics, Trajectory
from tinker_cookbook.tokenizer_utils import get_tokenizer

from nenyax.core import Environment, StepEnvironment, load, parse_uri
from nenyax.core.errors import UsageError
from nenyax.trainers.tinker.envs import NenyaxEnv, NenyaxMessageEnv


@functools.cache
def environment(uri: str) -> Environment:
    """The environment `uri` names, loaded once per process (every builder of a run shares it)."""
    return load(uri)


@functools.cache
def renderer(model_name: str, renderer_name: str | None) -> Renderer:
    """The cookbook's renderer `renderer_name` over `model_name`'s tokenizer (the model's recommended one
    when None); `model_name` is a Hugging Face id or a local model folder."""
    if renderer_name is None:
        from tinker_cookbook.model_info import get_recommended_renderer_name

        try:
            renderer_name = get_recommended_renderer_name(model_name)
        except Exception as exc:
            msg = f"tinker-cookbook recommends no renderer for {model_name!r} ({exc}); name one (renderer_name=...)."
            raise UsageError(msg) from exc
    return get_renderer(renderer_name, get_tokenizer(model_name))


def step_environment(uri: str) -> StepEnvironment:
    """`uri`'s environment, which must be step mode for the cookbook's own rollout loop."""
    env = environment(uri)
    if not isinstance(env, StepEnvironment):
        msg = (
            f"{uri} is a {env.manifest.mode.value}-mode environment, which runs its own loop: "
            "play it with nenyax_group_rollout, not the cookbook's do_group_rollout."
        )
        raise UsageError(msg)
    return env


@dataclass
class NenyaxEnvGroupBuilder(EnvGroupBuilder):
    """`group_size` episodes of `task` of the environment `uri`, each from `seed`.

    `model_name` names the tokenizer (a Hugging Face id or a folder: the sampled model's own) and
    `renderer_name` the cookbook's renderer for its chat format; `env_options` are passed to
    `EnvFromMessageEnv` (``max_trajectory_tokens``, ``failed_parse_reward``...).
    """

    uri: str
    task: str | None
    group_size: int
    seed: int | None = None
    model_name: str = ""
    renderer_name: str | None = None
    env_options: dict[str, Any] = field(default_factory=dict)
    _made: list[NenyaxEnv] = field(default_factory=list, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.group_size < 1:
            msg = f"A group has at least one episode, not group_size={self.group_size}."
            raise UsageError(msg)
        if not self.model_name:
            msg = "Name the sampled model's tokenizer (model_name=...): the renderer needs it."
            raise UsageError(msg)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_made": []}  # live environments stay in the process that made them

    async def make_envs(self) -> Sequence[Env]:
        env = step_environment(self.uri)
        render = renderer(self.model_name, self.renderer_name)
        made = [
            NenyaxEnv(render, NenyaxMessageEnv(env, self.task, self.seed), **self.env_options)
            for _ in range(self.group_size)
        ]
        self._made.extend(made)
        return made

    async def compute_group_rewards(
        self, trajectory_group: list[Trajectory], env_group: Sequence[Env]
    ) -> list[tuple[float, Metrics]]:
        """Each episode's judgment score; an episode the cookbook ended before Nenyax judged it (a reply the
        renderer could not parse, a context overflow) keeps only the cookbook's own step reward."""
        rewards: list[tuple[float, Metrics]] = []
        for env in env_group:
            judgment = env.message_env.judgment if isinstance(env, NenyaxEnv) else None
            if judgment is None:
                rewards.append((0.0, {"nenyax/unjudged": 1.0}))
                continue
            metrics: Metrics = {"nenyax/score": judgment.score, "nenyax/unjudged": 0.0}
            if judgment.passed is not None:
                metrics["nenyax/passed"] = float(judgment.passed)
            metrics.update({f"nenyax/component/{k}": v for k, v in judgment.components.items()})
            rewards.append((judgment.score, metrics))
        return rewards

    async def cleanup(self) -> None:
        made, self._made = self._made, []
        for env in made:
            try:
                await env.message_env.close()
            except Exception:  # noqa: BLE001 - cleanup must not raise (the cookbook's contract)
                continue

    def logging_tags(self) -> list[str]:
        """``nenyax``, the adapter (``reasoning_gym``) and the environment without options."""
        uri = parse_uri(self.uri)
        return ["nenyax", uri.format, f"{uri.format}:{uri.target}"]
