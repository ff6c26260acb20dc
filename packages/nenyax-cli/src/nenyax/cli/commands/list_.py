"""``nenyax list [ADAPTER] [WHERE]``: what each installed adapter can load, from its optional `listing()`."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any

import click
import orjson

from nenyax.core import UsageError
from nenyax.core.engine.rundirs import nenyax_versions
from nenyax.core.plugins.interfaces import declared
from nenyax.core.plugins.registry import default_registry
from nenyax.core.tiers.cached import recall


@click.command("list")
@click.argument("adapter", required=False)
@click.argument("where", required=False)
@click.option(
    "--import",
    "imports",
    multiple=True,
    metavar="MODULE",
    help="Import a module first (e.g. one that registers Gymnasium envs).",
)
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
def list_command(adapter: str | None, where: str | None, imports: tuple[str, ...], as_json: bool) -> None:
    """List the environments ADAPTER (default: every adapter) can load; WHERE narrows it (a name part, a folder).

    Each shows, in brackets, the tier nenyax check last measured for it on this machine, if one did.
    """
    registry = default_registry()
    names = [adapter] if adapter else registry.names("adapter")
    if adapter:
        registry.get("adapter", adapter)  # an unknown name fails here, with suggestions
    # Only an adapter declaring the `listing` capability (AdapterCapabilities) is asked what it can load.
    adapters = {name: registry.create("adapter", name) for name in names}
    listers = {name: a.listing if "listing" in declared(a) else None for name, a in adapters.items()}
    # An adapter whose listing takes `imports` imports the modules itself, so it can tell which ids each
    # one registers (and name them in URIs that load in a new process); it lists before anything else
    # imports them. The other listers see the modules already imported.
    takes_imports = {name for name, lister in listers.items() if lister is not None and _takes_imports(lister)}
    listed = {name: listers[name](where, imports=imports) for name in names if name in takes_imports}  # type: ignore[misc]
    for module in imports:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            msg = f"Cannot import {module!r} ({exc}); install it or drop --import {module}."
            raise UsageError(msg) from exc
    result: dict[str, list[dict[str, str | None]] | None] = {}
    versions = nenyax_versions()
    for name in names:
        lister = listers[name]
        if lister is None:
            result[name] = None  # this adapter cannot say what it can load: its URIs name a server or a path
            continue
        items = listed[name] if name in listed else lister(where)
        result[name] = [
            {"uri": i.uri, "description": i.description, "unavailable": i.unavailable, **_measured(i.uri, versions)}
            for i in items
        ]
    if as_json:
        click.echo(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())
        return
    for name, items in result.items():
        if items is None:
            click.echo(f"{name}: cannot list what it loads (see its README for its URIs)")
            continue
        gone = sum(1 for item in items if item["unavailable"])
        click.echo(f"{name}: {len(items)} environment(s)" + (f", {gone} of which cannot load here" if gone else ""))
        if items:
            _print_rows(items)
    if any(item["tier"] or item["stale_tier"] for items in result.values() for item in items or ()):
        click.echo(
            "[tier] is what `nenyax check` last measured here; [tier?] was measured with other nenyax "
            "distributions or versions installed."
        )


def _print_rows(items: list[dict[str, str | None]]) -> None:
    """One adapter's listing under column headers; the tier column only where a tier was measured."""
    rows = [(str(i["uri"]), _tier_column(i).strip(), _description(i)) for i in items]
    headers = ("uri", "tier" if any(tier for _, tier, _ in rows) else "", "description")
    widths = [max(len(row[col]) for row in [headers, *rows]) for col in range(2)]
    for uri, tier, description in [headers, *rows]:
        cells = [f"{uri:<{widths[0]}}"] + ([f"{tier:<{widths[1]}}"] if widths[1] else []) + [description]
        click.echo(("  " + "  ".join(cells)).rstrip())


def _description(item: dict[str, str | None]) -> str:
    if item["unavailable"]:
        return f"cannot load: {item['unavailable']}"
    return str(item["description"] or "")


def _measured(uri: str, versions: dict[str, str]) -> dict[str, str | None]:
    """The tier `nenyax check` last measured for `uri`; one measured with other nenyax distributions or
    versions installed is only `stale_tier`."""
    cached = recall(uri, versions)
    if cached is None:
        return {"tier": None, "stale_tier": None, "checked": None}
    tier = cached.tier.label
    return {
        "tier": tier if cached.current else None,
        "stale_tier": None if cached.current else tier,
        "checked": cached.checked,
    }


def _tier_column(item: dict[str, str | None]) -> str:
    if item["tier"]:
        return f"[{item['tier']}] "
    if item["stale_tier"]:
        return f"[{item['stale_tier']}?] "
    return ""


def _takes_imports(lister: Callable[..., Any]) -> bool:
    try:
        return "imports" in inspect.signature(lister).parameters
    except (TypeError, ValueError):  # a builtin or C callable without a signature
        return False
