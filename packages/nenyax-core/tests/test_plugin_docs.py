"""The plugin docs (``docs/plugins/``) name everything the code says a plugin of each kind is made of.

A page per kind, each naming its kind's registration hook, factory signature, conformance command and
pytest base class, every member of its interface and capability protocols (and of the other protocols
its interface module defines: a sandbox's handle, an exporter's writer), every capability, and every
check id its kit runs; every hookspec on a page; the check tables what ``docs/plugins/generate.py``
writes from the kit. The checker is a pair of functions returning what is missing, tested on mutated
copies of the pages so that it is shown to fail.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType

import attrs
import pytest

from nenyax.core import hookspecs
from nenyax.core.kinds import KINDS
from nenyax.core.plugins.interfaces import capability_interface, interface
from nenyax.core.plugins.registry import import_factory
from nenyax.testing.checks.common import common_checks

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs" / "plugins"
INDEX = DOCS / "README.md"

pytestmark = pytest.mark.skipif(
    not (ROOT / "packages" / "nenyax-core").is_dir(), reason="the docs are checked from a checkout of the repository"
)

_FENCE = re.compile(r"^```.*?^```[ \t]*$", re.DOTALL | re.MULTILINE)
_GENERATED = re.compile(r"<!-- checks:start -->.*?<!-- checks:end -->", re.DOTALL)
_SPAN = re.compile(r"`([^`\n]+)`")


# ---------------------------------------------------------------- what the code says a kind is made of


def protocols(kind: str) -> list[type]:
    """The kind's interface, its capabilities' protocols, then every other protocol its interface module
    defines (what the interface's methods return: `SandboxHandle`, `RowWriter`)."""
    main = interface(kind)
    found = [main, *(capability_interface(kind, c) for c in KINDS[kind].capabilities)]
    module = sys.modules[main.__module__]
    for obj in vars(module).values():
        if isinstance(obj, type) and getattr(obj, "_is_protocol", False) and obj.__module__ == module.__name__:
            found += [] if obj in found else [obj]
    return found


def members(protocol: type) -> tuple[list[str], list[str]]:
    """The public methods of `protocol`, and its public attributes and properties."""
    own = vars(protocol)
    methods = sorted(n for n, v in own.items() if not n.startswith("_") and callable(v))
    attributes = {n for n, v in own.items() if not n.startswith("_") and isinstance(v, property)}
    attributes |= {n for n in own.get("__annotations__", {}) if not n.startswith("_")}
    return methods, sorted(attributes)


def capabilities(kind: str) -> list[str]:
    """Every capability a `kind` plugin can declare: the kinds table's, and the fields of the attrs
    ``*Capabilities`` classes its interface module defines (`SandboxCapabilities`)."""
    found = list(KINDS[kind].capabilities)
    module = sys.modules[interface(kind).__module__]
    for obj in vars(module).values():
        if isinstance(obj, type) and attrs.has(obj) and obj.__name__.endswith("Capabilities"):
            found += [f.name for f in attrs.fields(obj) if f.name not in found]
    return found


def check_ids(kind: str) -> list[str]:
    """Every check `nenyax <kind>-check` runs: the common ones, then the kind's kit."""
    kit = tuple(import_factory(KINDS[kind].kit)) if KINDS[kind].kit else ()
    return [c.id for c in (*common_checks(kind), *kit)]


def hookspec_names() -> list[str]:
    """Every hookspec `nenyax.core.hookspecs` declares (what pluggy would call), whatever the kinds table says."""
    marker = f"{hookspecs.PROJECT}_spec"
    return [name for name, fn in vars(hookspecs).items() if callable(fn) and hasattr(fn, marker)]


# ---------------------------------------------------------------- the checker


def code_spans(text: str) -> list[str]:
    """The inline code spans of a Markdown text (fenced blocks left out)."""
    return _SPAN.findall(_FENCE.sub("", text))


def _named(spans: list[str], pattern: str) -> bool:
    return any(re.match(pattern, span) for span in spans)


def _as_call(name: str) -> str:
    """A method is named as a call: ``load(uri, context)``, ``async complete(request)``, ``Lister.listing(``."""
    return rf"^(?:async |await )?(?:\w+\.)*{re.escape(name)}\("


def _as_name(name: str) -> str:
    """An attribute, a hook or a capability is named alone, or followed by a call, a type or a value."""
    return rf"^(?:\w+\.)*{re.escape(name)}(?:$|[\s(:=\[])"


def missing_on_page(kind: str, text: str) -> list[str]:
    """What the page `text` of `kind` fails to name, one entry each; empty when it names everything.

    Check ids may be named anywhere (the generated table names them all); everything else must be named
    in the hand-written prose, outside the generated block.
    """
    row, spans, missing = KINDS[kind], code_spans(_GENERATED.sub("", text)), []
    if not _named(spans, _as_name(row.hook)):
        missing.append(f"the hook `{row.hook}`")
    if row.factory_signature not in spans:
        missing.append(f"the factory signature `{row.factory_signature}`")
    for needed in (f"nenyax new-plugin {kind} ", f"nenyax {row.check_command} ", f'conformance_suite("{kind}")'):
        if needed not in text:
            missing.append(f"`{needed.strip()}`")
    for protocol in protocols(kind):
        ref = f"{protocol.__module__}:{protocol.__name__}"
        if ref not in spans:
            missing.append(f"the protocol `{ref}`")
        methods, attributes = members(protocol)
        missing += [f"`{protocol.__name__}.{m}(...)`" for m in methods if not _named(spans, _as_call(m))]
        missing += [f"`{protocol.__name__}.{a}`" for a in attributes if not _named(spans, _as_name(a))]
    missing += [f"the capability `{c}`" for c in capabilities(kind) if not _named(spans, _as_name(c))]
    missing += [f"the check `{i}`" for i in check_ids(kind) if i not in code_spans(text)]
    return missing


def missing_across(pages: Mapping[str, str], index: str) -> list[str]:
    """What the set of pages (by kind) and the index lack: a kind's page, a hookspec on any page, a link."""
    missing = [f"no page for the {kind} kind (docs/plugins/{kind}.md)" for kind in KINDS if kind not in pages]
    everywhere = [span for text in pages.values() for span in code_spans(text)]
    missing += [f"the hookspec `{h}` is on no page" for h in hookspec_names() if not _named(everywhere, _as_name(h))]
    missing += [f"the index does not link {kind}.md" for kind in KINDS if f"]({kind}.md)" not in index]
    return missing


# ---------------------------------------------------------------- the docs as they are


def pages() -> dict[str, str]:
    """The page of each kind that has one."""
    return {kind: (DOCS / f"{kind}.md").read_text() for kind in KINDS if (DOCS / f"{kind}.md").is_file()}


@functools.cache
def generator() -> ModuleType:
    """``docs/plugins/generate.py``, imported from its file."""
    spec = importlib.util.spec_from_file_location("nenyax_docs_plugins_generate", DOCS / "generate.py")
    assert spec is not None, "docs/plugins/generate.py is missing"
    assert spec.loader is not None, "docs/plugins/generate.py cannot be loaded"
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_kind_has_a_page_every_hookspec_is_on_one_and_the_index_links_them():
    assert missing_across(pages(), INDEX.read_text()) == []


@pytest.mark.parametrize("kind", list(KINDS))
def test_each_page_names_its_hook_factory_interface_capabilities_and_checks(kind):
    assert missing_on_page(kind, (DOCS / f"{kind}.md").read_text()) == []


def test_every_generated_table_is_what_the_code_generates():
    made = generator()
    stale = []
    for path, (name, content) in made.expected().items():
        found = made.block(path.read_text(), name) if path.is_file() else None
        if found != content:
            stale.append(f"{path.name} ({name})")
    assert stale == [], "stale or missing generated tables: run python docs/plugins/generate.py"


def test_the_pages_are_linked_from_the_readmes():
    assert "docs/plugins/README.md" in (ROOT / "README.md").read_text()
    assert "docs/plugins/README.md" in (ROOT / "packages" / "nenyax-core" / "README.md").read_text()


# ---------------------------------------------------------------- the checker can fail


def test_a_check_id_removed_from_a_page_is_reported_and_its_table_is_stale():
    text = (DOCS / "judge.md").read_text()
    gone = "judge/is-deterministic"
    mutated = text.replace(f"`{gone}`", "")
    assert gone in text
    assert missing_on_page("judge", mutated) == [f"the check `{gone}`"]
    assert generator().block(mutated, "checks") != generator().table("judge")


@pytest.mark.parametrize(
    ("kind", "word", "reported"),
    [
        ("adapter", "nenyax_register_adapters", "the hook `nenyax_register_adapters`"),
        ("adapter", "listing", "`Lister.listing(...)`"),
        ("adapter", "listing", "the capability `listing`"),
        ("provider", "aclose", "`Provider.aclose(...)`"),
        ("judge", "judge_trajectory", "`TrajectoryJudge.judge_trajectory(...)`"),
        ("sandbox", "unenforced", "`SandboxHandle.unenforced`"),
        ("sandbox", "exec_users", "the capability `exec_users`"),
        ("learner", "restore", "`Learner.restore(...)`"),
        ("exporter", "abort", "`RowWriter.abort(...)`"),
        ("exporter", "nenyax.core.plugins.exporter:RowWriter", "the protocol `nenyax.core.plugins.exporter:RowWriter`"),
        ("tracer", "tracer_provider", "`Tracer.tracer_provider`"),
        ("tracer", "factory(**options) -> Tracer", "the factory signature `factory(**options) -> Tracer`"),
        ("tracer", 'conformance_suite("tracer")', '`conformance_suite("tracer")`'),
    ],
)
def test_a_name_removed_from_a_page_is_reported(kind, word, reported):
    text = (DOCS / f"{kind}.md").read_text()
    mutated = text.replace(word, "removed")
    assert word in text
    assert reported in missing_on_page(kind, mutated)


def test_another_kinds_page_does_not_pass_for_this_one():
    found = missing_on_page("adapter", (DOCS / "judge.md").read_text())
    assert "the hook `nenyax_register_adapters`" in found
    assert "the check `adapter/examples-load`" in found


def test_a_missing_page_a_hookspec_on_no_page_and_an_unlinked_page_are_reported():
    kept = {kind: text for kind, text in pages().items() if kind != "tracer"}
    found = missing_across(kept, INDEX.read_text().replace("](tracer.md)", "]"))
    assert "no page for the tracer kind (docs/plugins/tracer.md)" in found
    assert "the hookspec `nenyax_register_tracers` is on no page" in found
    assert "the index does not link tracer.md" in found
