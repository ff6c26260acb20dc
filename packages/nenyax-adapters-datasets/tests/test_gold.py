"""Gold answers stay as written, and rows without a usable gold are named and left out of the tasks."""

import json

import datasets
import pytest

from nenyax.adapters.datasets.golds import ListGold
from nenyax.core import BadURIError, Tier, check, load

AS_WRITTEN = ["NA", "007", "00501", "3.10", "True", "1e3", "null", "-0"]


def _csv(tmp_path, golds, name="golds.csv"):
    path = tmp_path / name
    lines = ["question,answer", *(f"Question {i}?,{gold}" for i, gold in enumerate(golds))]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_csv_golds_stay_exactly_as_written(tmp_path):
    env = load(f"hf:{_csv(tmp_path, AS_WRITTEN)}")
    assert [env.session(task=t).gold for t in env.task_ids()] == AS_WRITTEN
    assert env.bad_rows == ()
    # The form is what is judged: "7" is not the exact answer "007", though it is the same number.
    assert env.rollout(lambda q: "<answer>007</answer>", task="train/1").score == 1.0
    assert env.rollout(lambda q: "<answer>7</answer>", task="train/1").score == 0.0
    assert load(f"hf:{_csv(tmp_path, AS_WRITTEN)}?judge=numeric").rollout(lambda q: "7", task="train/1").score == 1.0


def test_an_empty_csv_gold_is_named_and_is_not_a_task(tmp_path):
    path = _csv(tmp_path, ["NA", "007", "", "42"])
    env = load(f"hf:{path}")
    assert env.task_ids() == ["train/0", "train/1", "train/3"]
    (bad,) = env.bad_rows
    assert (bad.task_id, bad.row, bad.line) == ("train/2", 2, 4)
    assert bad.sentence == "Line 4 of golds.csv (task train/2) has an empty 'answer'."
    assert env.manifest.extra["bad_rows"] == {"count": 1, "first": [bad.sentence]}
    assert env.manifest.extra["rows"] == 4
    assert env.manifest.splits[0].count == 3
    assert "1 of 4 rows have no usable gold answer" in env.manifest.description
    with pytest.raises(BadURIError, match=r"'train/2' is not a task: Line 4 of golds\.csv .* has an empty 'answer'"):
        env.session(task="train/2")


@pytest.mark.parametrize("seed", range(4))
def test_the_tier_does_not_depend_on_which_rows_are_sampled(tmp_path, seed):
    # Two of the rows sampled per check: whichever they are, the empty row is never one of them (it is no
    # task) and it is always reported. (Two, not one: against a single task, the constant answer equal to
    # that task's gold is as good as the reference, and the audit rightly refuses.)
    path = _csv(tmp_path, ["NA", "007", "", "42"])
    report = check(f"hf:{path}", samples=2, seed=seed)
    assert report.tier is Tier.AUDITED, [r.evidence for r in report.failed]
    assert report.manifest.extra["bad_rows"]["first"] == ["Line 4 of golds.csv (task train/2) has an empty 'answer'."]


def test_a_csv_reaches_the_right_tier_and_names_the_empty_row(tmp_path):
    report = check(f"hf:{_csv(tmp_path, ['NA', '007', ''])}", samples=5)
    assert report.tier is Tier.AUDITED, [r.evidence for r in report.failed]
    assert "Line 4 of golds.csv (task train/2) has an empty 'answer'" in report.manifest.description
    assert "2 task ids listed" in report.results[1].evidence  # the audit's population: the two good rows


def test_jsonl_golds_keep_their_form_and_bad_ones_are_named(tmp_path):
    path = tmp_path / "mixed.jsonl"
    path.write_text(
        "\n".join(
            [
                '{"question": "a", "answer": "007"}',
                '{"question": "b", "answer": 7}',
                '{"question": "c", "answer": 3.10}',
                '{"question": "d", "answer": 12345678901234567890123}',
                '{"question": "e", "answer": true}',
                "",
                '{"question": "f", "answer": null}',
                '{"question": "g"}',
                '{"question": "h", "answer": "   "}',
                '{"question": "i", "answer": "Work: 6*7.\\n#### "}',
                '{"question": "j", "answer": []}',
                '{"question": "k", "answer": ["x", null]}',
                '{"question": "l", "answer": {"value": 1}}',
            ]
        )
        + "\n"
    )
    env = load(f"hf:{path}")
    golds = [env.session(task=t).gold for t in env.task_ids()]
    assert golds == ["007", "7", "3.10", "12345678901234567890123", "true"]
    assert [row.sentence for row in env.bad_rows] == [
        "Line 7 of mixed.jsonl (task train/5) has a null 'answer'.",
        "Line 8 of mixed.jsonl (task train/6) has no 'answer' field.",
        "Line 9 of mixed.jsonl (task train/7) has an empty 'answer'.",
        "Line 10 of mixed.jsonl (task train/8) has an 'answer' with nothing after '####'.",
        "Line 11 of mixed.jsonl (task train/9) has an empty list in 'answer'.",
        "Line 12 of mixed.jsonl (task train/10) has a list in 'answer' holding a null 'answer'.",
        "Line 13 of mixed.jsonl (task train/11) has an object in 'answer', not text.",
    ]


def test_typed_files_name_bad_rows_by_index(tmp_path):
    path = tmp_path / "typed.parquet"
    datasets.Dataset.from_list(
        [{"question": "a", "answer": 7.0}, {"question": "b", "answer": None}, {"question": "c", "answer": float("nan")}]
    ).to_parquet(str(path))
    env = load(f"hf:{path}")
    assert env.task_ids() == ["train/0"]
    assert env.session().gold == "7.0"
    assert [row.sentence for row in env.bad_rows] == [
        "Row 1 of typed.parquet (task train/1, rows counted from 0) has a null 'answer'.",
        "Row 2 of typed.parquet (task train/2, rows counted from 0) has a NaN 'answer' (a missing value).",
    ]


def test_a_list_of_lists_is_one_list_answer_and_a_mixed_list_is_a_bad_row(tmp_path):
    path = tmp_path / "nested.jsonl"
    rows = [
        {"question": "a", "answer": ["x", ["y", "z"]]},
        {"question": "grid", "answer": [[8, 1, 9], [8, 1, 1]]},
        {"question": "c", "answer": ["4", "four"]},
        {"question": "d", "answer": [[1], []]},
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    env = load(f"hf:{path}")
    # A list of lists (an ARC grid) is one answer that is a list, not several answers and not "no answer".
    assert env.task_ids() == ["train/1", "train/2"]
    grid = env.session(task="train/1")
    assert grid.references == (ListGold((("8", "1", "9"), ("8", "1", "1"))),)
    assert grid.gold == "[[8, 1, 9], [8, 1, 1]]"
    assert env.session(task="train/2").references == ("4", "four")
    assert [row.sentence for row in env.bad_rows] == [
        "Line 1 of nested.jsonl (task train/0) has a list in 'answer' that mixes answers and lists "
        "(a grid is a list of lists only).",
        "Line 4 of nested.jsonl (task train/3) has a list of lists in 'answer' holding an empty list in 'answer'.",
    ]
    typed = tmp_path / "nested.parquet"
    datasets.Dataset.from_list(
        [{"question": "a", "answer": [["1", "2"]]}, {"question": "b", "answer": [["3"], ["4"]]}]
    ).to_parquet(str(typed))
    typed_env = load(f"hf:{typed}")
    assert typed_env.task_ids() == ["train/0", "train/1"]
    assert typed_env.session(task="train/1").gold == "[[3], [4]]"


@pytest.mark.parametrize("judge", ["exact", "numeric"])
@pytest.mark.parametrize(
    ("reply", "score"),
    [
        ("<answer>8 1 9\n8 1 1</answer>", 1.0),  # rows on lines, as ARC tasks ask for them
        ("[[8, 1, 9], [8, 1, 1]]", 1.0),
        ("<answer>[['8', '1', '9'], ['8', '1', '1']]</answer>", 1.0),
        ("<answer>8, 1, 9\n8, 1, 1</answer>", 1.0),
        ("8 1 9 8 1 1", 0.0),  # the right items in the wrong shape
        ("<answer>8 1 9\n8 1\n1</answer>", 0.0),
        ("[[8, 1, 9], [8, 1, 2]]", 0.0),
        ("", 0.0),
    ],
)
def test_a_grid_gold_is_judged_item_by_item(tmp_path, judge, reply, score):
    path = tmp_path / "grid.jsonl"
    path.write_text(json.dumps({"question": "grid?", "answer": [[8, 1, 9], [8, 1, 1]]}) + "\n")
    env = load(f"hf:{path}?judge={judge}")
    assert env.rollout(lambda q: reply).score == score
    assert env.rollout("reference").score == 1.0


def test_the_math_judge_refuses_a_grid_gold_at_load(tmp_path):
    path = tmp_path / "grid.jsonl"
    path.write_text(json.dumps({"question": "grid?", "answer": [[8, 1, 9], [8, 1, 1]]}) + "\n")
    with pytest.raises(BadURIError, match=r"has a list, which the math judge does not compare item by item"):
        load(f"hf:{path}?judge=math")


def test_a_one_row_grid_also_reads_from_a_flat_row(tmp_path):
    path = tmp_path / "row.jsonl"
    path.write_text(json.dumps({"question": "row?", "answer": [["1", "2", "3"]]}) + "\n")
    env = load(f"hf:{path}?judge=numeric")
    assert env.rollout(lambda q: "1 2 3").score == 1.0
    assert env.rollout(lambda q: "1 2").score == 0.0


@pytest.mark.parametrize(
    ("name", "content", "fragment"),
    [
        ("q.csv", "question,answer\nOne?,1\n,2\n", r"Line 3 of q\.csv has an empty 'question', so it has no question"),
        ("q.csv", "question,answer\nOne?,1\n", None),
        (
            "q.jsonl",
            '{"question": "One?", "answer": 1}\n{"answer": 2}\n',
            r"Line 2 of q\.jsonl has no 'question' field",
        ),
        (
            "q.json",
            '[{"question": "One?", "answer": 1}, {"question": null, "answer": 2}]',
            r"Row 1 of q\.json \(counting from 0\) has a null 'question'",
        ),
        (
            "q.jsonl",
            '{"question": "One?", "answer": 1}\n{"answer": 2}\n{"question": "", "answer": 3}\n',
            r"\(1 more rows lack one too\)",
        ),
    ],
)
def test_a_row_without_a_question_is_an_error_naming_it(tmp_path, name, content, fragment):
    path = tmp_path / name
    path.write_text(content)
    if fragment is None:
        assert load(f"hf:{path}").session().observation == "One?"
        return
    with pytest.raises(BadURIError, match=fragment) as info:
        load(f"hf:{path}")
    assert "\n" not in str(info.value)
    assert "?prompt_column=" in str(info.value)


def test_a_file_without_any_gold_is_an_error(tmp_path):
    with pytest.raises(BadURIError, match=r"No row of golds\.csv has a gold answer .*\?answer_column="):
        load(f"hf:{_csv(tmp_path, ['', ''])}")


def test_list_golds_are_alternatives_in_json_and_text_in_csv(tmp_path):
    path = tmp_path / "alts.jsonl"
    path.write_text(json.dumps({"question": "Two primes?", "answer": ["2", "3", "\\boxed{5}"]}) + "\n")
    session = load(f"hf:{path}").session()
    assert session.references == ("2", "3", "5")
    assert session.gold == "2"
    env = load(f"hf:{path}")
    assert [env.rollout(lambda q, a=a: f"<answer>{a}</answer>").score for a in ("3", "5", "7")] == [1.0, 1.0, 0.0]
    csv_path = tmp_path / "alts.csv"
    csv_path.write_text('question,answer\nTwo primes?,"[2, 3]"\n')
    csv_env = load(f"hf:{csv_path}")
    assert csv_env.session().references == ("[2, 3]",)


def test_csv_details(tmp_path):
    path = tmp_path / "quoted.csv"
    # A BOM, a quoted cell spanning two lines, a blank line, a short record: lines still name the rows.
    path.write_bytes('\ufeffquestion,answer\n"Two\nlines?",2\n\nShort\n'.encode())
    env = load(f"hf:{path}")
    assert env.session().observation == "Two\nlines?"
    assert [row.sentence for row in env.bad_rows] == ["Line 5 of quoted.csv (task train/1) has no 'answer' field."]
    (tmp_path / "wide.csv").write_text("question,answer\na,1,extra\n")
    with pytest.raises(BadURIError, match=r"Line 2 of wide\.csv has 3 fields but the header names 2 columns"):
        load(f"hf:{tmp_path / 'wide.csv'}")


def test_an_id_column_with_a_hole_is_an_error_naming_the_row(tmp_path):
    path = tmp_path / "ids.jsonl"
    path.write_text('{"id": "a", "question": "q", "answer": "1"}\n{"question": "r", "answer": "2"}\n')
    with pytest.raises(BadURIError, match=r"Line 2 of ids\.jsonl has no 'id' field, so it cannot name its task"):
        load(f"hf:{path}?id_column=id")
    path.write_text('{"id": 7, "question": "q", "answer": "1"}\n{"id": "007", "question": "r", "answer": "2"}\n')
    assert load(f"hf:{path}?id_column=id").task_ids() == ["train/7", "train/007"]
