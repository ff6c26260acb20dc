import json

import datasets
import pytest

from nenyax.core import BadURIError, Status, Tier, Trajectory, UsageError, check, load, serde


def _formats(tmp_path, rows):
    ds = datasets.Dataset.from_list(rows)
    paths = {"jsonl": tmp_path / "d.jsonl", "json": tmp_path / "d.json", "csv": tmp_path / "d.csv"}
    paths["jsonl"].write_text("".join(json.dumps(r) + "\n" for r in rows))
    paths["json"].write_text(json.dumps(rows))
    ds.to_csv(str(paths["csv"]), index=False)
    paths["parquet"] = tmp_path / "d.parquet"
    ds.to_parquet(str(paths["parquet"]))
    paths["disk"] = tmp_path / "saved"
    ds.save_to_disk(str(paths["disk"]))
    paths["dict"] = tmp_path / "saved_dict"
    datasets.DatasetDict({"train": ds.select(range(3)), "test": ds.select(range(3, 6))}).save_to_disk(
        str(paths["dict"])
    )
    return paths


@pytest.mark.parametrize("kind", ["jsonl", "json", "csv", "parquet", "disk"])
def test_every_format_loads_and_is_audited(tmp_path, rows, kind):
    path = _formats(tmp_path, rows)[kind]
    env = load(f"hf:{path}")
    assert env.task_ids() == [f"train/{i}" for i in range(6)]
    session = env.session(task="train/2")
    assert session.observation == "What is 12 times 12?"
    assert session.gold == "144"
    report = check(f"hf:{path}", samples=4)
    assert report.tier is Tier.AUDITED, [r.evidence for r in report.failed]


def test_dataset_dict_splits(tmp_path, rows):
    path = _formats(tmp_path, rows)["dict"]
    assert load(f"hf:{path}").task_ids() == ["train/0", "train/1", "train/2"]
    test = load(f"hf:{path}?split=test")
    assert test.task_ids() == ["test/0", "test/1", "test/2"]
    assert test.session().observation == "What is 9 times 6?"
    with pytest.raises(BadURIError, match=r"no split 'tset'\. Did you mean 'test'"):
        load(f"hf:{path}?split=tset")


def test_column_mapping_and_id_column(tmp_path):
    path = tmp_path / "renamed.jsonl"
    path.write_text(json.dumps({"key": "a1", "ask": "Capital of France?", "gold": "Paris"}) + "\n")
    env = load(f"hf:{path}?prompt_column=ask&answer_column=gold&id_column=key")
    assert env.task_ids() == ["train/a1"]
    # The gold comes from the mapped column: exact matching ignores case and the final full stop...
    traj = env.rollout(lambda q: "paris.", task="train/a1")
    assert traj.score == 1.0
    assert traj.steps[0].info == {"answer": "paris."}
    assert env.rollout(lambda q: "<answer>PARIS</answer>").judgment.passed
    # ...but is exact: a sentence around the answer is not the answer.
    wordy = env.rollout(lambda q: "It is paris.", task="train/a1")
    assert wordy.score == 0.0
    assert wordy.judgment.passed is False
    assert wordy.steps[0].info == {"answer": "It is paris."}
    assert serde.loads(serde.dumps(traj), Trajectory) == traj


def test_gsm8k_style_gold_answers(tmp_path):
    path = tmp_path / "gsm.jsonl"
    path.write_text(json.dumps({"question": "Q?", "answer": "Work: 6*7 = 42.\n#### 42"}) + "\n")
    env = load(f"hf:{path}?judge=numeric")
    assert env.session().gold == "42"
    assert env.rollout("reference").score == 1.0
    assert env.rollout(lambda q: "so the answer is 42.0").score == 1.0


@pytest.mark.parametrize(
    ("query", "error", "fragment"),
    [
        ("?prompt_column=quest", BadURIError, "no prompt column 'quest'; its columns are id, question, answer, note"),
        ("?answer_column=gold", BadURIError, "no answer column 'gold'; its columns are"),
        ("?judge=exactly", BadURIError, "No judge named 'exactly' is installed. Did you mean 'exact'"),
        ("?judge=numeric&tolerance=-1", UsageError, "tolerance must be a finite, non-negative number"),
        ("?id_column=note", BadURIError, "repeats values"),
        ("?promt_column=question", BadURIError, "no option 'promt_column'. Did you mean 'prompt_column'"),
        ("?split=test", BadURIError, "has no split 'test'. Known splits: train"),
    ],
)
def test_bad_input_is_one_sentence(jsonl, query, error, fragment):
    with pytest.raises(error, match=fragment) as info:
        load(f"hf:{jsonl}{query}")
    assert "\n" not in str(info.value)


def test_missing_or_unreadable_files(tmp_path):
    with pytest.raises(BadURIError, match="No file or directory at"):
        load(f"hf:{tmp_path / 'nope.jsonl'}")
    (tmp_path / "x.txt").write_text("hi")
    with pytest.raises(BadURIError, match=r"reads \.jsonl, \.json, \.parquet, \.csv files"):
        load(f"hf:{tmp_path / 'x.txt'}")
    with pytest.raises(BadURIError, match="not one written by save_to_disk"):
        load(f"hf:{tmp_path}")
    (tmp_path / "bad.jsonl").write_text('{"question": "q", "answer": "a"}\n{not json\n')
    with pytest.raises(BadURIError, match=r"Line 2 of bad\.jsonl is not valid JSON \(Expecting property name"):
        load(f"hf:{tmp_path / 'bad.jsonl'}")
    (tmp_path / "bad.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(BadURIError, match="datasets could not read"):
        load(f"hf:{tmp_path / 'bad.parquet'}")
    (tmp_path / "cols.jsonl").write_text('{"a": 1, "answer": 2}\n')
    with pytest.raises(BadURIError, match="No prompt column found among"):
        load(f"hf:{tmp_path / 'cols.jsonl'}")


def test_a_judge_that_raises_is_a_verifier_error(tmp_path):
    path = tmp_path / "words.jsonl"
    path.write_text(json.dumps({"question": "Say hi", "answer": "\\"}) + "\n")
    traj = load(f"hf:{path}?judge=math").rollout(lambda q: "<answer>5</answer>")
    assert traj.status is Status.VERIFIER_ERROR
    assert traj.judgment is None
    assert "cannot read the gold answer '\\\\' as mathematics" in traj.error
    assert traj.steps[0].action


def test_golds_the_numeric_judge_cannot_read_are_named_at_load(tmp_path):
    path = tmp_path / "mixed.jsonl"
    rows = [
        {"question": "One?", "answer": "1"},
        {"question": "Say hi", "answer": "hello"},
        {"question": "Half?", "answer": "50%"},
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    env = load(f"hf:{path}?judge=numeric")
    assert env.task_ids() == ["train/0", "train/2"]
    assert [row.sentence for row in env.bad_rows] == [
        "Line 2 of mixed.jsonl (task train/1) has a gold answer the numeric judge cannot read as a number ('hello')."
    ]
    assert "1 of 3 rows have no usable gold answer" in env.manifest.description
    assert env.rollout(lambda q: "0.5", task="train/2").score == 1.0
    assert load(f"hf:{path}").task_ids() == ["train/0", "train/1", "train/2"]  # the exact judge reads any text
    words = tmp_path / "words.jsonl"
    words.write_text(json.dumps({"question": "Say hi", "answer": "hello"}) + "\n")
    with pytest.raises(BadURIError) as info:
        load(f"hf:{words}?judge=numeric")
    assert str(info.value) == (
        "No row of words.jsonl has a usable gold answer (Line 1 of words.jsonl (task train/0) has a gold answer "
        "the numeric judge cannot read as a number ('hello'), and so on); choose another ?judge=."
    )


def test_chat_rendering_asks_for_answer_tags(jsonl):
    messages = load(f"hf:{jsonl}").session().render()
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "<answer>" in messages[0]["content"]
    assert messages[1]["content"] == "What is 3 times 4?"


def test_manifest_records_the_content(jsonl, rows):
    first = load(f"hf:{jsonl}")
    assert first.digest == load(f"hf:{jsonl}").digest
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in reversed(rows)))
    assert load(f"hf:{jsonl}").manifest.extra["content"] != first.manifest.extra["content"]


def test_a_list_of_acceptable_answers(tmp_path):
    path = tmp_path / "multi.jsonl"
    path.write_text('{"question": "Capital of France?", "answer": ["Paris", "paris city"]}\n')
    env = load(f"hf:{path}")
    assert env.rollout("reference").score == 1.0
    assert env.rollout(lambda q: "<answer>paris city</answer>").score == 1.0
    assert env.rollout(lambda q: "<answer>Lyon</answer>").score == 0.0


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        (lambda d: d / "empty.jsonl", "has no rows"),
        (lambda d: d / "header_only.csv", "has no rows"),
        (lambda d: "~surely_no_such_user_here/x.jsonl", "Cannot use the path"),
        (lambda d: d / ("a" * 300 + ".jsonl"), "Cannot use the path"),
    ],
)
def test_unusable_files_are_one_sentence(tmp_path, make, fragment):
    (tmp_path / "empty.jsonl").write_text("")
    (tmp_path / "header_only.csv").write_text("question,answer\n")
    with pytest.raises(BadURIError, match=fragment) as info:
        load(f"hf:{make(tmp_path)}")
    assert "\n" not in str(info.value)


def test_infinite_tolerance_is_refused(tmp_path):
    path = tmp_path / "n.jsonl"
    path.write_text('{"question": "1+1?", "answer": "2"}\n')
    with pytest.raises(UsageError, match="finite"):
        load(f"hf:{path}?judge=numeric&tolerance=inf")


def test_the_digest_does_not_depend_on_where_the_file_lies(tmp_path, monkeypatch):
    rows = '{"question": "1+1?", "answer": "2"}\n'
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "qa.jsonl").write_text(rows)
    monkeypatch.chdir(tmp_path / "a")
    here = load("hf:qa.jsonl")
    monkeypatch.chdir(tmp_path / "b")
    there = load("hf:qa.jsonl")
    assert here.digest == there.digest
    assert str(tmp_path) not in str(here.manifest.extra)
