"""Nenyax as lm-eval's model: an `lm_eval.api.model.LM` whose requests go to the episode's recording proxy.

- ``generate_until``: a raw prompt to ``/completions`` (lm-eval's prompt as the task renders it, no chat
  template), greedy unless the task samples, cut at the task's ``until`` strings as lm-eval's own models do.
- ``loglikelihood`` / ``loglikelihood_rolling``: ``/completions`` with ``echo``, ``logprobs=1`` and
  ``max_tokens=0``, which an Endpoint whose provider scores prompts answers (the embedded model does).
- A policy that is no model (reference, null, random, a Python policy) cannot score text. For a
  ``multiple_choice`` task it is asked the question instead (the context as the prompt) and the
  continuation its reply names is its pick (logprob 0, the others -1); a reply naming none raises
  `NoChoice`, which the environment judges 0. Other loglikelihood tasks refuse such a policy.

The class is made on first use: lm-eval is imported lazily (every module here imports without it).
"""

from __future__ import annotations

import functools
from typing import Any

from nenyax.adapters.lm_eval import logprobs
from nenyax.adapters.lm_eval.client import ProxyClient
from nenyax.core.errors import UnsupportedPolicyError

DEFAULT_MAX_TOKENS = 256
"""lm-eval's default ``max_gen_toks``."""
PICK_MAX_TOKENS = 64
"""How long a non-model policy's reply naming a choice may be."""


class NoChoice(Exception):
    """A non-model policy's reply named none of a multiple-choice document's choices."""

    def __init__(self, context: str, reply: str, choices: list[str]) -> None:
        super().__init__(f"The reply {reply[:80]!r} names none of the choices {choices}.")
        self.context, self.reply = context, reply


def _until(gen_kwargs: dict[str, Any]) -> list[str]:
    until = gen_kwargs.get("until") or []
    return [until] if isinstance(until, str) else [str(u) for u in until]


def cut(text: str, until: list[str]) -> str:
    """`text` up to the first of the stop strings (lm-eval's models cut replies the same way)."""
    for stop in until:
        if stop:
            text = text.split(stop, 1)[0]
    return text


def _text(body: dict[str, Any]) -> str:
    choices = body.get("choices") or []
    return str(choices[0].get("text") or "") if choices else ""


@functools.cache
def lm_class() -> type:
    """The `LM` subclass (made once lm-eval is imported)."""
    from lm_eval.api.model import LM

    class NenyaxLM(LM):
        """Answers lm-eval's requests through one episode's recording proxy."""

        def __init__(self, client: ProxyClient, *, scores: bool, output_type: str, seed: int | None) -> None:
            super().__init__()
            self.client, self.scores, self.output_type, self.seed = client, scores, output_type, seed

        def _body(self, **fields: Any) -> dict[str, Any]:
            return fields if self.seed is None else {**fields, "seed": self.seed}

        def generate_until(self, requests: list[Any]) -> list[str]:
            """Each prompt continued by the policy, cut at its ``until`` strings."""
            replies = []
            for request in requests:
                context, gen_kwargs = request.args
                gen_kwargs = dict(gen_kwargs or {})
                until = _until(gen_kwargs)
                temperature = float(gen_kwargs.get("temperature", 0.0)) if gen_kwargs.get("do_sample") else 0.0
                body = self._body(
                    prompt=context,
                    max_tokens=int(gen_kwargs.get("max_gen_toks", DEFAULT_MAX_TOKENS)),
                    temperature=temperature,
                    **({"stop": until[:4]} if until else {}),
                )
                replies.append(cut(_text(self.client.complete(body)), until))
            return replies

        def loglikelihood(self, requests: list[Any]) -> list[tuple[float, bool]]:
            """Each continuation's logprob given its context, and whether it is the greedy one."""
            if not self.scores:
                return self._picks(requests)
            found = []
            for request in requests:
                context, continuation = request.args
                body = self._body(prompt=context + continuation, max_tokens=0, echo=True, logprobs=1, temperature=0.0)
                found.append(logprobs.continuation(self.client.complete(body), len(context)))
            return found

        def loglikelihood_rolling(self, requests: list[Any]) -> list[float]:
            """Each text's logprob (its first token unscored: the proxy has no begin-of-text token to prefix)."""
            if not self.scores:
                self._refuse()
            found = []
            for request in requests:
                (text,) = request.args[:1]
                body = self._body(prompt=text, max_tokens=0, echo=True, logprobs=1, temperature=0.0)
                found.append(logprobs.rolling(self.client.complete(body)))
            return found

        def _refuse(self) -> None:
            msg = (
                f"A {self.output_type} task needs a model that scores text (e.g. -m local:smollm2-135m); "
                "this policy is no model."
            )
            raise UnsupportedPolicyError(msg)

        def _picks(self, requests: list[Any]) -> list[tuple[float, bool]]:
            """A non-model policy's picks: one question per context, its reply matched against the choices."""
            if self.output_type != "multiple_choice":
                self._refuse()
            by_context: dict[str, list[str]] = {}
            for request in requests:
                context, continuation = request.args
                by_context.setdefault(context, []).append(continuation)
            picked: dict[str, str] = {}
            for context, continuations in by_context.items():
                body = self._body(prompt=context, max_tokens=PICK_MAX_TOKENS, temperature=0.0)
                reply = _text(self.client.complete(body)).strip()
                named = [c for c in continuations if c.strip().casefold() == reply.casefold()]
                if not named:
                    raise NoChoice(context, reply, [c.strip() for c in continuations])
                picked[context] = named[0]
            return [(0.0, True) if picked[r.args[0]] == r.args[1] else (-1.0, False) for r in requests]

    return NenyaxLM
