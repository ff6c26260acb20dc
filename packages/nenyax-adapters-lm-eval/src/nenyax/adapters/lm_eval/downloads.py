"""A download lm-eval (or a task's own code) could not make, told as the infrastructure failure it is.

lm-eval's bundled tasks fetch their data from the HF Hub, and some tasks' code fetches nltk data: offline,
or behind a firewall, that fails. It is not the user's mistake (the URI is right), so it is an
`InfraFailure` (exit 1, never a reward) that names what could not be fetched, not a `UsageError`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from urllib.error import URLError

from nenyax.core import InfraFailure

_NLTK_RESOURCE = re.compile(r"nltk\.download\('([^']+)'\)")
_URL = re.compile(r"https?://[^\s'\"`]+")
_NETWORK_ERRORS = ("LocalEntryNotFoundError", "OfflineModeIsEnabled", "ConnectionError", "ConnectTimeout")
"""huggingface_hub's and requests' names for a request that could not be made (matched by name: neither
library is a dependency of this adapter)."""


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        yield link
        link = link.__cause__ or link.__context__


def blocked(exc: BaseException, task: str, dataset: str | None = None) -> InfraFailure | None:
    """The `InfraFailure` to raise when `exc` is a download that could not be made, else None."""
    for link in _chain(exc):
        text = str(link)
        if isinstance(link, LookupError) and (resource := _NLTK_RESOURCE.search(text)):
            name = resource.group(1)
            return InfraFailure(
                f"lm-eval's task {task!r} needs nltk's {name!r} data, which is not on this machine and could not "
                f"be downloaded: run `python -m nltk.downloader {name}` where the network is reachable."
            )
        network = isinstance(link, ConnectionError | TimeoutError | URLError)
        if network or any(cls.__name__ in _NETWORK_ERRORS for cls in type(link).__mro__):
            url = _URL.search(text)
            what = url.group(0).rstrip(".:,;)") if url else repr(dataset) if dataset else "its data"
            offline = " (HF_HUB_OFFLINE is set)" if os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0") else ""
            return InfraFailure(
                f"lm-eval's task {task!r} needs {what}, which this machine could not download{offline}: "
                "an infrastructure problem, not a mistake in the URI (lm-eval's bundled tasks ship no data)."
            )
    return None
