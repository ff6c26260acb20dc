"""A NeMo Gym resources server of the tests' own that misbehaves on purpose, row by row.

No server shipped with nemo-gym answers /verify with a malformed body, a non-finite reward or a
dropped connection (Starlette's JSONResponse even refuses NaN), so this one, built on nemo-gym's
own SimpleResourcesServer and started by the adapter's launcher like the shipped ones, does: the
row's ``misbehave`` field says how. It runs in the nemo-gym interpreter, not in the tests'.
"""

import os

from fastapi import Response
from nemo_gym.base_resources_server import (
    BaseResourcesServerConfig,
    BaseVerifyRequest,
    BaseVerifyResponse,
    SimpleResourcesServer,
)


class MisbehavingConfig(BaseResourcesServerConfig):
    pass


class MisbehavingVerifyRequest(BaseVerifyRequest):
    misbehave: str | None = None
    expected_answer: str | None = None


def _reply_text(body: BaseVerifyRequest) -> str:
    output = body.response.model_dump().get("output") or []
    return "".join(part.get("text") or "" for item in output for part in item.get("content") or [])


class MisbehavingResourcesServer(SimpleResourcesServer):
    config: MisbehavingConfig

    async def verify(self, body: MisbehavingVerifyRequest):
        how = body.misbehave
        if how == "nan":
            return Response('{"reward": NaN}', media_type="application/json")
        if how == "infinity":
            return Response('{"reward": Infinity}', media_type="application/json")
        if how == "not_json":
            return Response("<html>upstream exploded</html>", media_type="text/html")
        if how == "no_reward":
            return {"score": 1.0}
        if how == "string_reward":
            return {"reward": "1.0"}
        if how == "masked":  # nemo-gym 0.7's mask_sample, which 0.4's BaseVerifyResponse does not have
            return {"reward": 0.0, "mask_sample": True, "failure_kind": "judge_unavailable", "failure_reason": "429"}
        if how == "whole":  # graded as a whole: the reply must be the expected answer and nothing else
            reward = 1.0 if _reply_text(body).strip() == body.expected_answer else 0.0
            return BaseVerifyResponse(**body.model_dump(), reward=reward)
        if how == "crash":
            raise RuntimeError("the verifier crashed")
        if how == "drop":
            os._exit(1)  # the process dies mid-request: the client sees the connection drop
        return BaseVerifyResponse(**body.model_dump(), reward=1.0)
