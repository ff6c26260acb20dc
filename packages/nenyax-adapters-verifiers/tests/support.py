"""Which verifiers API the installed package offers; imported by name (this folder is on `pythonpath`, as is
``envs/``, the tests' own environment modules, found as installed env ids would be)."""

import importlib.util
from importlib import metadata


def _has(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


try:
    VERSION: str | None = metadata.version("verifiers")
except metadata.PackageNotFoundError:
    VERSION = None
# v1 tasksets run on verifiers 0.4 (0.3's v1 is an earlier shape the adapter refuses in one sentence).
APIS = {
    "legacy": VERSION is not None and _has("verifiers.legacy"),
    "v1": VERSION is not None and _has("verifiers.v1") and tuple(map(int, VERSION.split(".")[:2])) >= (0, 4),
}
WANTED = {
    "legacy": "pip install 'verifiers>=0.3,<0.4' (nox -s verifiers-0.3)",
    "v1": "pip install 'verifiers>=0.4,<0.5' (nox -s verifiers-0.4)",
}
