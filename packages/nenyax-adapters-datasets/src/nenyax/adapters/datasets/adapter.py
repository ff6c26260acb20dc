"""The ``hf`` adapter: a local question/answer dataset, judged by a judge plugin picked by name."""

from __future__ import annotations

from pathlib import Path

from nenyax.adapters.datasets.environment import DatasetEnvironment
from nenyax.adapters.datasets.spec import parse_spec
from nenyax.core.contract.uri import EnvURI
from nenyax.core.plugins.adapter import LoadContext
from nenyax.core.plugins.judge import create_judge


class DatasetsAdapter:
    """The ``hf`` adapter: a local JSONL/JSON/Parquet/CSV file or save_to_disk folder, one question per row."""

    def load(self, uri: EnvURI, context: LoadContext) -> DatasetEnvironment:
        """Load the dataset offline and resolve its columns and judge; every mistake is one `BadURIError` sentence."""
        spec = parse_spec(uri)
        # Any installed judge works by name, a third party's too: the registry in use finds it.
        judge = create_judge(context.registry, spec.judge, spec.judge_options)
        return DatasetEnvironment(uri.raw, spec, judge)

    def examples(self) -> list[str]:
        """A dataset that ships with this adapter (a few arithmetic questions), judged two ways."""
        sample = Path(__file__).with_name("sample.jsonl")
        return [f"hf:{sample}", f"hf:{sample}?judge=numeric&id_column=id"]
