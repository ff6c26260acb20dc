"""Run one NeMo Gym resources server on loopback, without Ray or a head server.

This file is executed as a script by the interpreter that has nemo-gym installed (Python >= 3.12),
which need not be the one running Nenyax: it imports nothing from Nenyax, and at module level only
the standard library (so importing it anywhere is harmless).

    python _serve.py --server mcqa [--host 127.0.0.1] [--port 0] [--config '{"grading_mode": null}']
    python _serve.py --app path/to/app.py --name my_server

It prints one JSON line on stdout once the server accepts requests, ``{"url", "name", "version",
"datasets": {name: absolute jsonl path}, "agents": {agent type: max_steps}, "routes": [POST paths]}``,
or ``{"error": sentence, "known": [...], "agents": {...}}`` when it cannot start, then sends
everything else it prints to stderr. It exits when its stdin closes, so it never outlives the
process that started it.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import json
import os
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def _say(payload: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(payload) + "\n")
    sys.stdout.flush()


def _servers_root() -> Path | None:
    # find_spec on the top-level package only: nothing under it (and no nemo_gym) is imported yet.
    spec = importlib.util.find_spec("resources_servers")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _known_servers(root: Path) -> list[str]:
    return sorted(p.parent.name for p in root.glob("*/app.py"))


def _config_files(app: Path, name: str) -> list[Path]:
    configs = sorted((app.parent / "configs").glob("*.yaml"))
    # The config named after the server first: it is the one the server's README runs.
    return sorted(configs, key=lambda p: p.stem != name)


def _server_config(app: Path, name: str) -> dict[str, Any]:
    """The server's own settings from its config YAML (the part under ``resources_servers``)."""
    from omegaconf import OmegaConf

    for path in _config_files(app, name):
        try:
            data = OmegaConf.to_container(OmegaConf.load(path), resolve=False)
        except Exception:  # noqa: BLE001 - omegaconf raises I/O, YAML, its own, even assertion errors: skip it
            continue
        for block in data.values() if isinstance(data, dict) else ():
            servers = block.get("resources_servers") if isinstance(block, dict) else None
            if isinstance(servers, dict) and servers:
                settings = next(iter(servers.values()))
                if isinstance(settings, dict):
                    # Interpolations (${...}) name settings of a full deployment; leave them to defaults.
                    return {k: v for k, v in settings.items() if not (isinstance(v, str) and "${" in v)}
    return {}


def _config_mappings(app: Path, name: str) -> Iterator[dict[Any, Any]]:
    """Every mapping, at any depth, of every readable config of the server (unreadable ones are skipped)."""
    import yaml

    def walk(node: Any) -> Iterator[dict[Any, Any]]:
        if isinstance(node, dict):
            yield node
            for value in node.values():
                yield from walk(value)
        elif isinstance(node, list):
            for value in node:
                yield from walk(value)

    for path in _config_files(app, name):
        try:
            data = yaml.safe_load(path.read_text())
        except (OSError, ValueError, yaml.YAMLError):  # unreadable, not UTF-8, not YAML: skip it
            continue
        yield from walk(data)


def _datasets(app: Path, name: str, gym_root: Path) -> dict[str, str]:
    """Dataset name -> JSONL path, for every dataset its configs name whose file exists here."""
    found: dict[str, str] = {}
    for node in _config_mappings(app, name):
        path = node.get("jsonl_fpath")
        if isinstance(path, str) and isinstance(node.get("name"), str):
            full = (gym_root / path).resolve()
            if full.is_file():
                found.setdefault(node["name"], str(full))
    example = app.parent / "data" / "example.jsonl"
    if not found and example.is_file():
        found["example"] = str(example.resolve())
    return found


def _agents(app: Path, name: str) -> dict[str, int | None]:
    """The agents (``responses_api_agents`` types) the server's configs play it with, and their ``max_steps``."""
    found: dict[str, int | None] = {}
    for node in _config_mappings(app, name):
        agents = node.get("responses_api_agents")
        if isinstance(agents, dict):
            for agent, settings in agents.items():
                steps = settings.get("max_steps") if isinstance(settings, dict) else None
                found.setdefault(str(agent), steps if isinstance(steps, int) else None)
    return found


def _missing_requirements(exc: BaseException, app: Path) -> str:
    """A sentence naming the server's own requirements file, when it lacks a module that file would install."""
    requirements = app.parent / "requirements.txt"
    if not isinstance(exc, ModuleNotFoundError) or not requirements.is_file():
        return ""
    return (
        f" It needs the module {exc.name!r}, which {sys.executable} lacks: install the server's own requirements, "
        f"listed in {requirements} (pip install -r it, leaving out its line for nemo-gym itself)."
    )


def _post_routes(app: Any) -> list[str]:
    """The POST paths the app serves: which agent protocol the server speaks."""
    return sorted({route.path for route in app.routes if "POST" in (getattr(route, "methods", None) or ())})


def _server_class(module: Any) -> type:
    from nemo_gym.base_resources_server import SimpleResourcesServer

    classes = [
        c
        for _, c in inspect.getmembers(module, inspect.isclass)
        if issubclass(c, SimpleResourcesServer) and c.__module__ == module.__name__ and not inspect.isabstract(c)
    ]
    if len(classes) != 1:
        msg = f"{module.__file__} defines {len(classes)} concrete resources servers; expected exactly one."
        raise RuntimeError(msg)
    return classes[0]


def _load_module(app: Path, module_name: str | None) -> Any:
    if module_name is not None:
        return importlib.import_module(module_name)
    spec = importlib.util.spec_from_file_location(f"nenyax_served_{app.stem}", app)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[spec.name] = module  # type: ignore[union-attr]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _build_app(cls: type, name: str, host: str, port: int, settings: dict[str, Any]) -> Any:
    """What ``run_webserver`` does, minus Ray, the head server and the global config."""
    from omegaconf import OmegaConf

    from nemo_gym.config_types import BaseServerConfig
    from nemo_gym.server_utils import ServerClient

    config_cls = cls.model_fields["config"].annotation  # type: ignore[attr-defined]  # a pydantic model class
    config = config_cls.model_validate({"entrypoint": "app.py", **settings, "name": name, "host": host, "port": port})
    # The client is only used by servers that call other servers (judges, agents); no head server runs.
    client = ServerClient(
        head_server_config=BaseServerConfig(host=host, port=0), global_config_dict=OmegaConf.create({})
    )
    server = cls(config=config, server_client=client)
    app = server.setup_webserver()
    server.setup_liveness(app)
    server.setup_exception_middleware(app)
    return app


def _exit_when_parent_goes() -> None:
    sys.stdin.read()  # returns at EOF: the parent closed our stdin or died
    os._exit(0)


def main(argv: list[str] | None = None) -> int:
    """Start the server and serve until stdin closes or a signal arrives."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", help="a server shipped with nemo-gym (resources_servers/<name>)")
    parser.add_argument("--app", help="path to a resources server's app.py of your own")
    parser.add_argument("--name", help="the server's name at runtime (default: the server or file name)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--config", default="{}", help="JSON object of config settings to override")
    args = parser.parse_args(argv)

    if args.server:
        root = _servers_root()
        if root is None:
            _say({"error": f"{sys.executable} has no nemo-gym installed (no resources_servers package)."})
            return 2
        app_path = root / args.server / "app.py"
        if not args.server.isidentifier() or not app_path.is_file():
            _say({"error": f"nemo-gym has no resources server named {args.server!r}.", "known": _known_servers(root)})
            return 2
        module_name: str | None = f"resources_servers.{args.server}.app"
        name = args.name or args.server
        gym_root = root.parent
    else:
        app_path = Path(args.app).resolve()
        if not app_path.is_file():
            _say({"error": f"No resources server file at {app_path}."})
            return 2
        module_name, name, gym_root = None, args.name or app_path.parent.name, app_path.parent

    try:
        agents = _agents(app_path, name)
    except ImportError:  # no PyYAML: nemo-gym is not installed either, and the import below says so
        agents = {}
    try:
        import uvicorn

        import nemo_gym

        module = _load_module(app_path, module_name)
        settings = {**_server_config(app_path, name), **json.loads(args.config)}
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((args.host, args.port))
        port = sock.getsockname()[1]
        app = _build_app(_server_class(module), name, args.host, port, settings)
    except Exception as exc:  # noqa: BLE001 - the server's module runs here: any failure is the startup error
        error = f"The resources server {name!r} failed to start: {type(exc).__name__}: {str(exc).rstrip('.')}."
        _say({"error": error + _missing_requirements(exc, app_path), "agents": agents})
        return 1

    threading.Thread(target=_exit_when_parent_goes, daemon=True).start()
    config = uvicorn.Config(app, log_level="warning", access_log=False, timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)

    async def serve() -> None:
        import asyncio

        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started and not task.done():
            await asyncio.sleep(0.02)
        if server.started:
            _say(
                {
                    "url": f"http://{args.host}:{port}",
                    "name": name,
                    "version": getattr(nemo_gym, "__version__", "unknown"),
                    "datasets": _datasets(app_path, name, gym_root),
                    "agents": agents,
                    "routes": _post_routes(app),
                }
            )
            # From here on the server's own prints go to stderr: nobody reads our stdout any more.
            os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
        await task

    import asyncio

    asyncio.run(serve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
