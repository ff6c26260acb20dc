"""`nenyax-nemo-gym-agent`: serve a Nenyax environment as a NeMo Gym agent server, or write its dataset rows.

    nenyax-nemo-gym-agent --env 'reasoning_gym:basic_arithmetic?size=2' --port 8000 \\
        --policy-base-url http://127.0.0.1:8001/v1 --policy-model-name my-model
    nenyax-nemo-gym-agent --env 'reasoning_gym:basic_arithmetic?size=2' --write-rows train.jsonl --limit 64
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
from typing import Any

from nenyax.core.errors import NenyaxError


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="nenyax-nemo-gym-agent", description=__doc__.splitlines()[0])
    p.add_argument("--env", required=True, help="the Nenyax environment URI")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000, help="0: a free port (printed)")
    p.add_argument("--name", default="nenyax_agent", help="the server's name, the rows' agent_ref.name")
    p.add_argument("--policy-base-url", action="append", help="the trainer's OpenAI-compatible /v1 URL (repeatable)")
    p.add_argument("--policy-model-name", help="the model name it serves")
    p.add_argument("--max-tokens", type=int, help="tokens per call when a row names no max_output_tokens")
    p.add_argument("--temperature", type=float, help="temperature when a row names none")
    p.add_argument("--timeout", type=float, help="seconds per episode")
    p.add_argument("--max-retries", type=int, help="retries of a failed model call (default 6)")
    p.add_argument("--write-rows", metavar="PATH", help="write NeMo Gym dataset rows (JSONL) and exit")
    p.add_argument("--split")
    p.add_argument("--limit", type=int)
    return p


def free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def agent_from(args: argparse.Namespace) -> Any:
    """The agent server the parsed command line describes (its environment loaded now, not at the first row)."""
    from nenyax.core import load
    from nenyax.trainers.nemo_gym.serve import agent_server

    names = ("max_tokens", "temperature", "timeout", "max_retries")
    settings = {k: getattr(args, k) for k in names if getattr(args, k) is not None}
    urls = args.policy_base_url[0] if len(args.policy_base_url) == 1 else args.policy_base_url
    port = args.port or free_port(args.host)
    return agent_server(
        load(args.env), urls, args.policy_model_name, host=args.host, port=port, name=args.name, **settings
    )


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        if args.write_rows:
            from nenyax.trainers.nemo_gym.serve import rows

            written = rows(args.env, agent_name=args.name, split=args.split, limit=args.limit)
            with open(args.write_rows, "w") as f:
                f.writelines(json.dumps(row) + "\n" for row in written)
            print(json.dumps({"rows": len(written), "path": args.write_rows}))
            return 0
        if not args.policy_base_url or not args.policy_model_name:
            print("Serving needs --policy-base-url and --policy-model-name.", file=sys.stderr)
            return 2
        import uvicorn

        from nenyax.trainers.nemo_gym.serve import app_of

        agent = agent_from(args)
        host, port = agent.config.host, agent.config.port
        print(json.dumps({"base_url": f"http://{host}:{port}", "name": agent.config.name}), flush=True)
        uvicorn.run(app_of(agent), host=host, port=port, log_level="warning")
        return 0
    except NenyaxError as e:
        print(str(e), file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
