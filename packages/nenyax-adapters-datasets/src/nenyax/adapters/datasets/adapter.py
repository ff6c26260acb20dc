"""The ``hf`` adapter: a local question/answer dataset, judged by a judge plugin picked by name."""

from __future__ import annotations

import os
from pathlib import Path

from nenyax.adapters.datasets.environment import DatasetEnvironment
from nenyax.adapters.datasets.loading import BUILDERS
from nenyax.adapters.datasets.options import parse_spec
from nenyax.core import AdapterCapabilities, BadURIError, EnvURI, Listing, LoadContext
from nenyax.core.errors import UsageError
from nenyax.core.toolkit.plugins import create


class DatasetsAdapter:
    """The ``hf`` adapter: a local JSONL/JSON/Parquet/CSV file or save_to_disk folder, one question per row."""

    capabilities = AdapterCapabilities(listing=True)

    def load(self, uri: EnvURI, context: LoadContext) -> DatasetEnvironment:
        """Load the dataset offline and resolve its columns and judge; every mistake is one `BadURIError` sentence."""
        spec = parse_spec(uri)
        # Any installed judge works by name, a third party's too: the registry in use finds it.
        try:  # a question session judges answers: a judge must declare the `answer` capability
            judge = create(context.registry, "judge", spec.judge, spec.judge_options, needs=("answer",))
        except UsageError as exc:
            raise BadURIError(str(exc)) from exc
        return DatasetEnvironment(uri.raw, spec, judge)

    def examples(self) -> list[str]:
        """A dataset that ships with this adapter (a few arithmetic questions), judged two ways."""
        sample = Path(__file__).with_name("sample.jsonl")
        return [f"hf:{sample}", f"hf:{sample}?judge=numeric&id_column=id"]

    def listing(self, where: str | None = None) -> list[Listing]:
        """The dataset files (.jsonl, .json, .parquet, .csv) and save_to_disk folders under `where`.

        Without `where`, the sample this adapter ships. Each is described by its size.
        """
        if where is None:
            sample = Path(__file__).with_name("sample.jsonl")
            return [Listing(uri=f"hf:{sample}", description="the sample that ships with nenyax-adapters-datasets")]
        root = Path(where)
        if not root.exists():
            msg = f"No file or directory at {where!r}; name a folder holding .jsonl, .json, .parquet or .csv files."
            raise BadURIError(msg)
        if root.is_file():
            return [_file_listing(root)] if root.suffix.lower() in BUILDERS else []
        found = []
        for folder, dirs, files in os.walk(root):
            here = Path(folder)
            if _saved(here):  # a save_to_disk folder is one dataset; its own .json files are not
                found.append(Listing(uri=f"hf:{here}", description="save_to_disk folder"))
                dirs.clear()
                continue
            dirs.sort()
            found.extend(_file_listing(here / f) for f in sorted(files) if Path(f).suffix.lower() in BUILDERS)
        return found


def _saved(path: Path) -> bool:
    return any((path / name).exists() for name in ("dataset_dict.json", "dataset_info.json", "state.json"))


def _file_listing(path: Path) -> Listing:
    return Listing(uri=f"hf:{path}", description=f"{path.suffix[1:]} file, {_size(path.stat().st_size)}")


def _size(n: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1000  # type: ignore[assignment]
    return f"{n} bytes"
