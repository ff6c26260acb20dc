"""What ``nenyax new-plugin`` writes: a plugin distribution of one kind, rendered from the templates shipped
in this package (``templates/common`` for every kind, then ``templates/<kind>``, whose files win).

Templates are `string.Template` files (``*.tmpl``; ``$$`` is a literal dollar). In their paths, ``PACKAGE``
stands for the plugin's import package and a leading ``dot-`` for a dot (``dot-github`` is ``.github``: no
hidden folder in the wheel); a file whose name starts with one ``_`` (``_about.md``, not ``__init__.py``) is a
part of others (``$about``), not written itself.
"""

from __future__ import annotations

import re
import string
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import attrs

from nenyax.core import __version__ as core_version
from nenyax.core.errors import UsageError, did_you_mean
from nenyax.core.kinds import KINDS

NAME = re.compile(r"^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$")
"""A plugin name: lower-case letters and digits, words joined by single '-' or '_' (what `PluginSpec` takes)."""


@attrs.frozen
class KindTemplate:
    """What the templates of one kind need beyond the plugin's name."""

    module: str
    """The implementation module (``<package>.<module>``), imported only when the plugin is first used."""
    suffix: str
    """The factory class is the plugin's name in CamelCase followed by this (``AcmeAdapter``)."""
    summary: str
    """The spec's one line for ``nenyax plugins``; ``{name}`` is the plugin's name."""
    dependencies: tuple[str, ...] = ()
    """Requirements beyond nenyax-core."""


KIND_TEMPLATES: dict[str, KindTemplate] = {
    "adapter": KindTemplate("adapter", "Adapter", "the {name} format: words to spell backwards (a template to edit)"),
    "provider": KindTemplate("provider", "Provider", "an in-process model that echoes the last message (a template)"),
    "judge": KindTemplate("judge", "Judge", "exact match, ignoring case and surrounding space (a template to edit)"),
    "sandbox": KindTemplate("sandbox", "Sandbox", "bubblewrap, one namespace set per command (a template to edit)"),
    "learner": KindTemplate("learner", "Learner", "remembers each task's best answer (a template to edit)"),
    "exporter": KindTemplate("exporter", "Exporter", "one JSON array per destination (a template to edit)"),
    "tracer": KindTemplate(
        "tracer",
        "Tracer",
        "core's GenAI spans to an OTLP/HTTP collector, counted (a template to edit)",
        dependencies=("opentelemetry-sdk>=1.30,<2", "opentelemetry-exporter-otlp-proto-http>=1.30,<2"),
    ),
}
"""Every kind's template facts; the templates themselves are files under ``templates/<kind>``."""


def package_name(name: str) -> str:
    """The plugin's own top-level import package: ``acme-env`` -> ``nenyax_acme_env`` (never under ``nenyax``)."""
    return "nenyax_" + name.replace("-", "_")


def class_prefix(name: str) -> str:
    """The name in CamelCase: ``acme-env`` -> ``AcmeEnv``."""
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[-_]", name))


def _compatible(version: str) -> str:
    """A range taking `version`'s minor release and its patches: ``0.1.3`` -> ``>=0.1,<0.2``."""
    major, minor = (int(part) for part in version.split(".")[:2])
    return f">={major}.{minor},<{major}.{minor + 1}"


def validate(kind: str, name: str) -> None:
    """Raise `UsageError` (one sentence) unless `kind` is a plugin kind and `name` can name its plugin."""
    if kind not in KINDS:
        msg = f"There is no plugin kind {kind!r}." + did_you_mean(kind, KINDS, "plugin kind")
        raise UsageError(msg)
    if not NAME.match(name):
        msg = (
            f"{name!r} cannot name a plugin: use lower-case letters and digits, starting with a letter, "
            "words joined by single '-' or '_' (e.g. 'acme' or 'acme-env')."
        )
        raise UsageError(msg)
    if kind == "adapter" and "-" in name:
        fixed = name.replace("-", "_")
        msg = f"An adapter's name is its URI scheme, which takes '_' but never '-': name it {fixed!r}."
        raise UsageError(msg)


def variables(kind: str, name: str) -> dict[str, str]:
    """What the templates of `kind` are filled with for the plugin `name`."""
    facts = KIND_TEMPLATES[kind]
    prefix = class_prefix(name)
    package = package_name(name)
    compatible = _compatible(core_version)
    dependencies = [f"nenyax-core{compatible}", *facts.dependencies]
    return {
        "kind": kind,
        "name": name,
        "distribution": f"nenyax-{name}",
        "package": package,
        "module": facts.module,
        "prefix": prefix,
        "cls": prefix + facts.suffix,
        "factory": f"{package}.{facts.module}:{prefix}{facts.suffix}",
        "hook": KINDS[kind].hook,
        "check_command": KINDS[kind].check_command,
        "kind_summary": KINDS[kind].summary,
        "summary": facts.summary.format(name=name),
        "dependencies": "".join(f'\n  "{d}",' for d in dependencies),
        "cli_requirement": f"nenyax-cli{compatible}",
    }


def _walk(folder: Traversable, prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], Traversable]:
    found: dict[tuple[str, ...], Traversable] = {}
    for item in sorted(folder.iterdir(), key=lambda t: t.name):
        if item.is_dir():
            found.update(_walk(item, (*prefix, item.name)))
        elif item.name.endswith(".tmpl"):
            found[(*prefix, item.name.removesuffix(".tmpl"))] = item
    return found


def _target(parts: tuple[str, ...], package: str) -> str:
    """A template's path as written: ``PACKAGE`` is the import package, ``dot-x`` is ``.x``."""

    def renamed(part: str) -> str:
        if part == "PACKAGE":
            return package
        return "." + part.removeprefix("dot-") if part.startswith("dot-") else part

    return "/".join(map(renamed, parts))


def _is_part(parts: tuple[str, ...]) -> bool:
    return parts[-1].startswith("_") and not parts[-1].startswith("__")


def render(kind: str, name: str) -> dict[str, str]:
    """Every file of the `kind` plugin `name`: its path inside ``nenyax-<name>/`` -> its text."""
    validate(kind, name)
    root = resources.files("nenyax.cli") / "templates"
    templates = {**_walk(root / "common"), **_walk(root / kind)}
    values = variables(kind, name)
    # Parts first (``_about.md``: ``$about``), so that the files that include them can.
    for parts, template in templates.items():
        if _is_part(parts):
            key = parts[-1].removeprefix("_").split(".")[0]
            values[key] = string.Template(template.read_text(encoding="utf-8")).substitute(values).rstrip("\n")
    return {
        _target(parts, values["package"]): string.Template(template.read_text(encoding="utf-8")).substitute(values)
        for parts, template in templates.items()
        if not _is_part(parts)
    }


def write(kind: str, name: str, directory: Path) -> tuple[Path, list[str]]:
    """Write the plugin into ``directory/nenyax-<name>/``; returns that folder and the files written in it.

    A folder there that holds anything is refused (nothing is overwritten), as is a `directory` that is a file.
    """
    files = render(kind, name)
    existing = next((p for p in (directory, *directory.parents) if p.exists()), None)
    if existing is not None and not existing.is_dir():
        msg = f"--dir {directory} cannot hold the plugin: {existing} is a file, not a folder."
        raise UsageError(msg)
    target = directory / f"nenyax-{name}"
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        msg = f"{target} already exists and is not an empty folder; remove it or choose another --dir."
        raise UsageError(msg)
    try:
        for relative, text in files.items():
            path = target / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    except OSError as exc:
        msg = f"{target} cannot be written ({exc.strerror or exc})."
        raise UsageError(msg) from exc
    return target, sorted(files)
