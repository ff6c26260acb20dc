"""The episode's side of the recording proxy: blocking ``/completions`` calls from lm-eval's worker thread.

lm-eval's evaluator is synchronous, and the native loop runs it on a worker thread, so a plain blocking
HTTP call (the standard library's) is the simplest client; the proxy answers on the event loop meanwhile.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from nenyax.core import EnvironmentFailure, InfraFailure


class ProxyClient:
    """Posts legacy-completions requests to one episode's proxy route."""

    def __init__(self, base_url: str, api_key: str, model: str, timeout: float) -> None:
        self.url = base_url.rstrip("/") + "/completions"
        self.api_key, self.model, self.timeout = api_key, model, timeout

    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        """One ``text_completion`` body for `body` (the model is added); failures raised as their kind.

        A 5xx is the model's failure, already recorded by the proxy as the episode's status (infra_error,
        or the policy's own); it is raised as `InfraFailure` so lm-eval stops rather than scoring a reply
        that never came.
        """
        data = json.dumps({"model": self.model, **body}).encode()
        request = urllib.request.Request(
            self.url,
            data=data,
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {self.api_key}"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                answer: dict[str, Any] = json.loads(response.read())
                return answer
        except urllib.error.HTTPError as exc:
            message = _message(exc)
            if exc.code >= 500:
                raise InfraFailure(f"The model call failed (HTTP {exc.code}): {message}") from exc
            # A refused request (400: e.g. prompt scoring from a model that returns no prompt logprobs) is
            # this episode's failure, kept as env_error, not an abort of the whole run.
            raise EnvironmentFailure(f"The recording proxy refused the call (HTTP {exc.code}): {message}") from exc
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            raise InfraFailure(f"The recording proxy could not be reached: {exc}") from exc


def _message(exc: urllib.error.HTTPError) -> str:
    try:
        body = json.loads(exc.read())
        return str(body["error"]["message"])
    except Exception:  # noqa: BLE001 - any unreadable error body: fall back to the status line
        return str(exc.reason)
