"""``nenyax serve-model [MODEL]``: any provider's model as an OpenAI-compatible server with vLLM-style token ids.

Harnesses and trainers that speak the OpenAI API (and read vLLM's ``prompt_token_ids``, per-choice
``token_ids`` and logprobs) can then be tried offline against the embedded model, or any model a provider
serves, through the same recording proxy every episode's calls go through.
"""

from __future__ import annotations

import asyncio
import signal

import click
import orjson

from nenyax.core import DEFAULT_MODEL, ChatRequest, Endpoint, RecordingProxy


@click.command("serve-model")
@click.argument("model", required=False)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=8001, show_default=True, help="Port (0 picks a free one)."
)
@click.option("--json", "as_json", is_flag=True, help="Announce the server as one JSON line.")
def serve_model_command(model: str | None, host: str, port: int, as_json: bool) -> None:
    """Serve MODEL (provider:model, default the embedded one) at /v1: chat/completions, completions,
    responses and models, OpenAI's shapes with vLLM's token ids and logprobs on every reply.

    Sampling parameters come from each request (temperature, max_tokens, seed, logprobs...). Stops on
    SIGTERM or Ctrl-C.
    """
    spec = model or DEFAULT_MODEL
    endpoint = Endpoint(spec)
    asyncio.run(_serve(endpoint, spec, host, port, as_json))


async def _serve(endpoint: Endpoint, spec: str, host: str, port: int, as_json: bool) -> None:
    # One token first: a model that is not there fails now, in one sentence, and the first client does not
    # wait for the weights to load.
    await endpoint.send(
        ChatRequest(model=endpoint.model, messages=({"role": "user", "content": "Hi"},), params={"max_tokens": 1})
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    async with RecordingProxy(host, port) as proxy:
        route = proxy.serve(endpoint, spec)
        if as_json:
            click.echo(orjson.dumps({"model": spec, "base_url": route.base_url}).decode())
        else:
            click.echo(f"Serving {spec} at {route.base_url} (OpenAI-compatible, with vLLM's token ids).")
        await stop.wait()
    await endpoint.aclose()
