"""Rewrite the generated blocks of the pages in this folder from the code; the prose is written by hand.

Each ``<kind>.md`` holds one block between ``<!-- checks:start -->`` and ``<!-- checks:end -->``: every check
that ``nenyax <kind>-check`` runs (`nenyax.testing.checks.common_checks` first, then the kind's kit,
`nenyax.core.kinds.Kind.kit`), with what it proves (its run function's docstring) and the capability that
gates it (`Check.requires`). ``README.md`` holds the table of kinds between ``<!-- kinds:start -->`` and
``<!-- kinds:end -->``, from `nenyax.core.kinds.KINDS`. Run it with nenyax-core importable::

    python docs/plugins/generate.py          # rewrite the blocks
    python docs/plugins/generate.py --check  # exit 1, naming the pages, when a block is stale

``packages/nenyax-core/tests/test_plugin_docs.py`` fails when a block differs from what this writes.
"""

from __future__ import annotations

import inspect
import re
import sys
from pathlib import Path

from nenyax.core.contract.checking import Check
from nenyax.core.kinds import KINDS
from nenyax.core.plugins.registry import import_factory
from nenyax.testing.checks.common import common_checks

HERE = Path(__file__).resolve().parent
INDEX = HERE / "README.md"


def page(kind: str) -> Path:
    """The page of `kind` in this folder."""
    return HERE / f"{kind}.md"


def _pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"(<!-- {name}:start -->\n)(.*?)(<!-- {name}:end -->)", re.DOTALL)


def block(text: str, name: str = "checks") -> str | None:
    """The text between the `name` markers in `text`, or None when a marker is missing."""
    found = _pattern(name).search(text)
    return None if found is None else found.group(2)


def rewrite(text: str, name: str, content: str) -> str:
    """`text` with the `name` block replaced by `content` (unchanged when the markers are missing)."""
    return _pattern(name).sub(lambda m: m.group(1) + content + m.group(3), text, count=1)


def checks(kind: str) -> tuple[tuple[Check, str], ...]:
    """Every check `nenyax <kind>-check` runs, in order, each with where it comes from (``common`` or ``kit``)."""
    row = KINDS[kind]
    own: tuple[Check, ...] = tuple(import_factory(row.kit)) if row.kit else ()
    return tuple((c, "common") for c in common_checks(kind)) + tuple((c, "kit") for c in own)


def proves(check: Check) -> str:
    """What `check` proves, for a table cell: its run function's docstring (else its summary) on one line."""
    doc = inspect.getdoc(check.run) or check.summary
    return " ".join(doc.split()).replace("``", "`").replace("|", "\\|")


def runs(check: Check) -> str:
    """When `check` runs: always, or only for a plugin declaring the capabilities it requires."""
    if not check.requires:
        return "always"
    return "declares " + " and ".join(f"`{c}`" for c in check.requires)


def table(kind: str) -> str:
    """The ``checks`` block of `kind`'s page."""
    lines = [
        f"Generated from `nenyax.testing.checks` by `python docs/plugins/generate.py`; {len(checks(kind))} checks,",
        "in the order they run. Do not edit this table by hand.",
        "",
        "| check | from | runs | what it proves |",
        "| --- | --- | --- | --- |",
        *(f"| `{c.id}` | {source} | {runs(c)} | {proves(c)} |" for c, source in checks(kind)),
    ]
    return "\n".join(lines) + "\n"


def kinds_table() -> str:
    """The ``kinds`` block of the index: each kind's page, summary, hook, factory and conformance command."""
    lines = [
        "| kind | page | what it is | registration hook | factory | conformance |",
        "| --- | --- | --- | --- | --- | --- |",
        *(
            f"| {k.name} | [{k.name}.md]({k.name}.md) | {k.summary} | `{k.hook}` | `{k.factory_signature}` | "
            + (f"`nenyax {k.check_command} NAME` |" if k.kit else "no kit yet |")
            for k in KINDS.values()
        ),
    ]
    return "\n".join(lines) + "\n"


def expected() -> dict[Path, tuple[str, str]]:
    """Every generated block: the page it is in, its name and its content."""
    made = {page(kind): ("checks", table(kind)) for kind in KINDS}
    made[INDEX] = ("kinds", kinds_table())
    return made


def main(argv: list[str]) -> int:
    """Rewrite every stale block, or with ``--check`` only name the stale pages; exit 1 when one is stale
    under ``--check``, or when a page or its markers are missing."""
    check_only = "--check" in argv
    failed = False
    for path, (name, content) in expected().items():
        text = path.read_text() if path.exists() else ""
        if block(text, name) is None:
            print(f"{path.name}: no <!-- {name}:start --> ... <!-- {name}:end --> block to write in")
            failed = True
            continue
        new = rewrite(text, name, content)
        if new == text:
            continue
        if check_only:
            print(f"{path.name}: the {name} table is stale; run python docs/plugins/generate.py")
            failed = True
        else:
            path.write_text(new)
            print(f"{path.name}: rewrote the {name} table")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
