"""``nemo_gym:http://host:port?rows=rows.jsonl`` (a running server) or ``nemo_gym:<server>`` (started here)."""

from __future__ import annotations

import urllib.parse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nenyax.adapters.nemo_gym import launcher, server_kind, wire
from nenyax.adapters.nemo_gym import rows as rowlib
from nenyax.adapters.nemo_gym.environment import NemoGymEnvironment, Settings
from nenyax.adapters.nemo_gym.gymnasium import GymnasiumSession
from nenyax.adapters.nemo_gym.options import OPTIONS, TOOL_MAX_TURNS
from nenyax.core import BadURIError, Capabilities, EnvURI, LoadContext, Manifest, Mode, Split
from nenyax.core.toolkit.options import Read
from nenyax.core.toolkit.suggest import did_you_mean


def _url(target: str) -> str:
    parts = urllib.parse.urlsplit(target)
    if not parts.hostname or parts.path.strip("/") or parts.query:
        msg = f"{target!r} is not a server URL; write it as http://host:port (no path)."
        raise BadURIError(msg)
    return f"{parts.scheme}://{parts.netloc}"


def _rows_path(read: Read) -> Path | None:
    value = read["rows"]
    return None if value is None else Path(value).expanduser().resolve()


class NemoGymAdapter:
    """The ``nemo_gym`` adapter: a NeMo Gym resources server and its dataset rows."""

    def __init__(self, examples: Sequence[str] | None = None) -> None:
        """`examples` overrides what `examples()` returns (tests point it at servers they started)."""
        self._examples = list(examples) if examples is not None else None

    def examples(self) -> list[str]:
        """The two servers the adapter is measured on, started here (needs nemo-gym; see `launcher`)."""
        return self._examples if self._examples is not None else ["nemo_gym:mcqa", "nemo_gym:reasoning_gym"]

    def load(self, uri: EnvURI, context: LoadContext | None = None) -> NemoGymEnvironment:
        """Connect to (or start) the server and read its rows; every mistake is one sentence."""
        read = OPTIONS.read(uri)
        config = read.prefixed["config"]
        if uri.target.startswith(("http://", "https://")):
            if config or "dataset" in read.given:
                msg = (
                    "?dataset and ?config.* apply to a server Nenyax starts (nemo_gym:<server>), not to a running one."
                )
                raise BadURIError(msg)
            url = _url(uri.target)
            rows_path = _rows_path(read)
            if rows_path is None:
                msg = (
                    "A resources server does not list its tasks: give the dataset rows, "
                    f"e.g. nemo_gym:{url}?rows=rows.jsonl."
                )
                raise BadURIError(msg)
            netloc = urllib.parse.urlsplit(url).netloc
            return self._environment(uri, read, url, rows_path, rows_path.stem, name=netloc, probe=True)
        process = launcher.acquire(uri.target, config)
        try:
            rows_path = _rows_path(read)
            dataset = read["dataset"] or ("example" if "example" in process.datasets else "")
            if rows_path is None:
                if not process.datasets:
                    msg = f"The server {uri.target!r} ships no dataset file here; give one with ?rows=<rows.jsonl>."
                    raise BadURIError(msg)
                dataset = dataset or sorted(process.datasets)[0]
                if dataset not in process.datasets:
                    msg = (
                        f"The server {uri.target!r} has no dataset {dataset!r} here; it has "
                        f"{', '.join(sorted(process.datasets))}." + did_you_mean(dataset, process.datasets)
                    )
                    raise BadURIError(msg)
                rows_path = Path(process.datasets[dataset])
            split = dataset or rows_path.stem
            extra = {"started": True, "config": config, "datasets": sorted(process.datasets)}
            return self._environment(
                uri,
                read,
                process.url,
                rows_path,
                split,
                name=process.name,
                version=process.version,
                extra=extra,
                on_close=lambda: launcher.release(process),
                routes=process.routes,
                agents=process.agents,
            )
        except BaseException:
            launcher.release(process)
            raise

    def _environment(
        self,
        uri: EnvURI,
        read: Read,
        url: str,
        rows_path: Path,
        split: str,
        *,
        name: str,
        version: str = "unknown",
        extra: dict[str, Any] | None = None,
        on_close: Any = None,
        probe: bool = False,
        routes: list[str] | None = None,
        agents: dict[str, int | None] | None = None,
    ) -> NemoGymEnvironment:
        rows = rowlib.read_rows(rows_path)
        gold_field = rowlib.pick_gold_field(rows, read["gold_field"])
        tools = sorted({t["name"] for row in rows for t in rowlib.tool_specs(row)})
        tool_errors = read["tool_errors"]
        if probe:  # after the URI's own mistakes, which are reported before any network trouble
            routes = wire.probe(url)
        kind = server_kind.from_routes(url, routes)
        if kind == server_kind.GYMNASIUM:
            default_turns = server_kind.max_steps(agents or {}, kind) or server_kind.GYMNASIUM_MAX_STEPS
        else:
            default_turns = TOOL_MAX_TURNS if tools else 1
        settings = Settings(
            rows_path=rows_path,
            split=split,
            gold_field=gold_field,
            reference=read["reference"],
            max_turns=read["max_turns"] or default_turns,
            tool_errors=tool_errors,
            timeout=read["timeout"],
            protocol=kind,
        )
        gymnasium = kind == server_kind.GYMNASIUM
        manifest = Manifest(
            uri=uri.raw,
            format="nemo_gym",
            format_version=version,
            mode=Mode.STEP,
            name=name,
            description=(
                f"{len(rows)} dataset rows of {rows_path.name} on the NeMo Gym resources server {name}: "
                + (
                    "each episode is /reset, then /step for each turn, as gymnasium_agent plays it; "
                    "its reward is the sum of the step rewards."
                    if gymnasium
                    else "each episode is /seed_session, tool calls, then /verify for the reward."
                )
            ),
            splits=(Split(name=split, count=len(rows)),),
            observation=(
                "Responses API input items: the row's prompt and the reset observation, then each step's "
                "tool outputs and observation."
                if gymnasium
                else "Responses API input items: the row's prompt, then the output of each tool call."
            ),
            action=(
                (
                    "One turn's reply as text, which the server's /step reads"
                    if gymnasium
                    else "The final answer as text, which the server's /verify parses"
                )
                + (
                    ", or a tool call {'name': ..., 'arguments': {...}} "
                    "(a chat model writes <tool_call>{json}</tool_call>)."
                    if tools
                    else "."
                )
            ),
            tools=tuple(tools),
            extra={
                "started": False,
                **(extra or {}),
                "rows": str(rows_path),
                "rows_digest": rowlib.file_digest(rows_path),
                "gold_field": gold_field,
                "reference": settings.reference,
                "tool_errors": tool_errors,
                "protocol": kind,
                "fields": sorted({k for row in rows for k in row}),
            },
            capabilities=Capabilities(
                seeded=False,
                stable_task_ids=True,
                reference_policy=gold_field is not None,
                multi_turn=settings.max_turns > 1,
                tools=bool(tools),
                max_turns=settings.max_turns,
            ),
        )
        session_class = GymnasiumSession if gymnasium else None
        return NemoGymEnvironment(manifest, url, rows, settings, on_close=on_close, session_class=session_class)
