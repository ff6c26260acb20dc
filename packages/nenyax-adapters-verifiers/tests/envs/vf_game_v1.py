"""A number-guessing game: a verifiers v1 taskset that brings its own `Env`, as verifiers 0.4's TextArena and
OpenEnv tasksets do (TextArena's needs nltk data from the internet, OpenEnv's a running server: neither runs
offline here, so this game stands in, written the way `verifiers.v1.tasksets.textarena` is).

The env plays the user: it answers each guess "Higher." or "Lower." and records the game's reward on the
trace itself; the task has no ``@vf.reward``. Importable as the taskset id ``vf_game_v1``
(``verifiers:vf-game-v1``): its ``__all__`` exports the `Taskset` and the `Env` subclass, which is how
verifiers' loader pairs them.
"""

import re

import verifiers.v1 as vf

SECRETS = ["3", "7", "5", "2"]


class GuessData(vf.TaskData):
    answer: str


class GuessTask(vf.Task[GuessData]):
    pass


class GuessConfig(vf.TasksetConfig):
    num_tasks: int = len(SECRETS)
    turns: int = 4
    """Guesses a game allows."""


class GuessEnvConfig(vf.EnvConfig):
    player: vf.AgentConfig = vf.AgentConfig()


def _guess(reply: str) -> str | None:
    numbers = re.findall(r"\d+", reply)
    return numbers[-1] if numbers else None


class GuessEnv(vf.Env[GuessEnvConfig]):
    async def run(self, task, agents):
        secret = task.data.answer
        won = 0.0
        turns = self.taskset.config.turns
        async with agents.player.interaction(task) as interaction:
            segment = await interaction.turn()
            for turn in range(turns):
                if segment.terminated:
                    break
                guess = _guess(segment.last_reply)
                if guess == secret:
                    won = 1.0
                    break
                if turn == turns - 1:
                    break
                if guess is None:
                    hint = "No number there: reply with a number."
                else:
                    hint = "Higher." if int(guess) < int(secret) else "Lower."
                segment = await interaction.turn(hint)
        interaction.trace.record_reward("game_reward", won, 1.0)


class GuessTaskset(vf.Taskset[GuessTask, GuessConfig]):
    def load(self):
        return [
            GuessTask(
                GuessData(
                    prompt="I picked a number from 1 to 8. Guess it: reply with a number.", answer=s, id=f"guess-{i}"
                ),
                self.config.task,
            )
            for i, s in enumerate(SECRETS[: self.config.num_tasks])
        ]


__all__ = ["GuessEnv", "GuessTaskset"]
