"""A verifiers v1 taskset whose own `Env` seats two players (a solver and a critic), named as
``verifiers:vf_seats_v1:DuoTaskset``: Nenyax plays one policy per episode, so it refuses it."""

import verifiers.v1 as vf


class DuoTask(vf.Task[vf.TaskData]):
    @vf.reward(weight=1.0)
    async def said(self, trace: vf.Trace) -> float:
        return 1.0 if trace.last_reply else 0.0


class DuoTaskset(vf.Taskset[DuoTask, vf.TasksetConfig]):
    def load(self):
        return [DuoTask(vf.TaskData(prompt="Say hi.", id="duo-0"), self.config.task)]


class DuoEnvConfig(vf.EnvConfig):
    solver: vf.AgentConfig = vf.AgentConfig()
    critic: vf.AgentConfig = vf.AgentConfig()


class DuoEnv(vf.Env[DuoEnvConfig]):
    async def run(self, task, agents):
        await agents.solver.run(task)
        await agents.critic.run(task)


__all__ = ["DuoEnv", "DuoTaskset"]
