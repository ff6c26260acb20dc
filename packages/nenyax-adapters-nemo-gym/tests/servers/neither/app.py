"""A NeMo Gym resources server of the tests' own that speaks neither simple_agent's nor gymnasium_agent's protocol.

Built on nemo-gym's own SimpleResourcesServer (started by the adapter's launcher, in the nemo-gym
interpreter) but serving one route of its own, ``/act``, as servers played by other nemo-gym agents do:
the adapter must refuse it in one sentence, not post ``/seed_session`` and report a 404.
"""

from fastapi import FastAPI
from nemo_gym.base_resources_server import BaseResourcesServerConfig, BaseVerifyRequest, SimpleResourcesServer


class NeitherConfig(BaseResourcesServerConfig):
    pass


class NeitherResourcesServer(SimpleResourcesServer):
    config: NeitherConfig

    def setup_webserver(self) -> FastAPI:
        app = FastAPI()
        self.setup_session_middleware(app)
        app.post("/act")(self.act)
        return app

    async def act(self) -> dict:
        return {"ok": True}

    async def verify(self, body: BaseVerifyRequest) -> None:
        raise NotImplementedError("this server is played through /act")
