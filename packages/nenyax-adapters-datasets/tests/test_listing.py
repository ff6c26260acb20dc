"""The adapter's optional `listing()`, what `nenyax list hf [FOLDER]` prints."""

import datasets
import pytest

from nenyax.adapters.datasets.adapter import DatasetsAdapter
from nenyax.core import BadURIError


def test_listing_a_folder_finds_files_and_saved_datasets_but_not_their_insides(tmp_path):
    (tmp_path / "q.jsonl").write_text('{"question": "1+1?", "answer": "2"}\n')
    (tmp_path / "readme.md").write_text("not data")
    datasets.Dataset.from_dict({"question": ["2+2?"], "answer": ["4"]}).save_to_disk(str(tmp_path / "saved"))
    items = DatasetsAdapter().listing(str(tmp_path))
    assert [i.uri for i in items] == [f"hf:{tmp_path / 'q.jsonl'}", f"hf:{tmp_path / 'saved'}"]
    assert items[0].description == "jsonl file, 36 bytes"
    assert items[1].description == "save_to_disk folder"


def test_without_a_folder_it_lists_its_sample_and_a_missing_folder_is_one_sentence(tmp_path):
    [sample] = DatasetsAdapter().listing()
    assert sample.uri.endswith("sample.jsonl")
    with pytest.raises(BadURIError, match="No file or directory"):
        DatasetsAdapter().listing(str(tmp_path / "nowhere"))
