import json

import pytest

from nenyax.adapters.datasets.choice import ChoiceJudge, read_label
from nenyax.adapters.datasets.golds import ChoiceGold
from nenyax.core import BadURIError, Tier, UsageError, VerifierFailure, check, load

PLANETS = (("A", "Mercury"), ("B", "Jupiter"), ("C", "Mars"))


@pytest.mark.parametrize(
    "answer",
    [
        "B",
        "b",
        "B)",
        "(B)",
        "B.",
        "[B]",
        "B) Jupiter",
        "(B) Jupiter",
        "B. Jupiter",
        "The answer is B.",
        "**B**",
        "\\text{(B)}",
        "Option B",
        "Answer: (B)",
        "$B$",
    ],
)
def test_the_chosen_label_is_read_from_every_common_form(answer):
    assert read_label(answer) == "B"
    assert ChoiceJudge().judge(answer, "B").passed
    assert not ChoiceJudge().judge(answer, "C").passed


@pytest.mark.parametrize("answer", ["", "I do not know", "Jupiter", "B or C", "The planet B612"])
def test_no_label_without_options_scores_0(answer):
    judgment = ChoiceJudge().judge(answer, "B")
    assert judgment.score == 0.0
    assert judgment.passed is False


def test_an_options_text_reads_as_its_label_and_a_contradiction_scores_0():
    gold = ChoiceGold("B", PLANETS)
    assert ChoiceJudge().judge("Jupiter", gold).passed
    assert ChoiceJudge().judge("jupiter.", gold).passed
    assert not ChoiceJudge().judge("Mars", gold).passed
    assert not ChoiceJudge().judge("B) Mars", gold).passed  # the label says B, the text says C
    assert read_label("B) Mars", PLANETS) is None
    assert ChoiceJudge().judge("B) the largest one", gold).passed  # text that is no option: the label counts


@pytest.mark.parametrize("gold", ["hello", "AB", "", "[1, 2]"])
def test_a_gold_that_is_no_label_is_refused(gold):
    assert ChoiceJudge().unreadable_gold(gold) is not None
    with pytest.raises(VerifierFailure, match="not a choice label"):
        ChoiceJudge().judge("A", gold)


def _write(tmp_path, rows, name="mc.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_a_multiple_choice_dataset_shows_its_options_and_reaches_audited(tmp_path):
    rows = [
        {"question": "Largest planet?", "choices": ["Mercury", "Jupiter", "Mars"], "answer": "B"},
        {
            "question": "Red planet?",
            "choices": {"label": ["A", "B", "C"], "text": ["Venus", "Earth", "Mars"]},
            "answer": "C",
        },
        {"question": "Hottest planet?", "choices": {"A": "Venus", "B": "Mars"}, "answer": "(a)"},
        {"question": "Ringed planet?", "choices": ["Saturn", "Mars"], "answer": "A"},
    ]
    env = load(f"hf:{_write(tmp_path, rows)}?judge=choice")
    assert env.manifest.extra["choices_column"] == "choices"
    assert env.session(task="train/0").observation == "Largest planet?\n\nA. Mercury\nB. Jupiter\nC. Mars"
    assert env.rollout(lambda q: "B) Jupiter", task="train/0").score == 1.0
    assert env.rollout(lambda q: "<answer>Mars</answer>", task="train/1").score == 1.0
    assert env.rollout(lambda q: "The answer is A.", task="train/2").score == 1.0
    assert env.rollout(lambda q: "A", task="train/0").score == 0.0
    assert all(env.rollout("reference", task=task).score == 1.0 for task in env.task_ids())
    report = check(f"hf:{tmp_path / 'mc.jsonl'}?judge=choice", samples=4)
    assert report.tier is Tier.AUDITED, [r.evidence for r in report.failed]


def test_golds_the_choice_judge_cannot_read_are_named_at_load(tmp_path):
    rows = [
        {"question": "Largest planet?", "choices": ["Mercury", "Jupiter"], "answer": "B"},
        {"question": "Smallest?", "choices": ["Mercury", "Jupiter"], "answer": "Mercury"},
        {"question": "Third?", "choices": ["Mercury", "Jupiter"], "answer": "D"},
        {"question": "Fourth?", "choices": 7, "answer": "A"},
    ]
    env = load(f"hf:{_write(tmp_path, rows)}?judge=choice")
    assert env.task_ids() == ["train/0"]
    assert [row.sentence for row in env.bad_rows] == [
        "Line 2 of mc.jsonl (task train/1) has a gold answer that is not a choice label such as A or (B) ('Mercury').",
        "Line 3 of mc.jsonl (task train/2) has a gold label 'D' that is none of the task's options (A, B).",
        "Line 4 of mc.jsonl (task train/3) has no list of options in 'choices'.",
    ]
    words = _write(tmp_path, [{"question": "q", "answer": "Paris"}], name="words.jsonl")
    with pytest.raises(BadURIError, match=r"No row of words\.jsonl has a usable gold answer .*choose another \?judge="):
        load(f"hf:{words}?judge=choice")


def test_options_from_a_named_column_and_from_csv_json(tmp_path):
    path = tmp_path / "mc.csv"
    path.write_text('question,opts,answerKey\nLargest planet?,"[""Mercury"", ""Jupiter""]",B\n')
    env = load(f"hf:{path}?judge=choice&choices_column=opts&answer_column=answerKey")
    assert env.session().observation.endswith("A. Mercury\nB. Jupiter")
    assert env.rollout(lambda q: "Jupiter").score == 1.0
    with pytest.raises(BadURIError, match="no choices column 'nope'"):
        load(f"hf:{path}?judge=choice&choices_column=nope&answer_column=answerKey")


def test_an_index_gold_is_refused_with_a_hint_and_read_under_index_base(tmp_path):
    rows = [
        {"question": "Largest planet?", "choices": ["Mercury", "Jupiter", "Mars"], "answer": 1},
        {"question": "Red planet?", "choices": ["Venus", "Earth", "Mars"], "answer": 2},
    ]
    path = _write(tmp_path, rows, name="mmlu.jsonl")
    with pytest.raises(
        BadURIError,
        match=r"gold label '1' that is none of the task's options \(A, B, C\); if it is "
        r"an option's index, set \?judge\.index_base=0 or 1",
    ):
        load(f"hf:{path}?judge=choice")
    env = load(f"hf:{path}?judge=choice&judge.index_base=0")
    assert env.rollout(lambda q: "B) Jupiter", task="train/0").score == 1.0
    assert env.rollout(lambda q: "Mars", task="train/1").score == 1.0
    assert env.rollout(lambda q: "B", task="train/1").score == 0.0
    assert env.rollout("reference", task="train/1").score == 1.0
    one_based = load(f"hf:{path}?judge=choice&judge.index_base=1")
    assert one_based.rollout(lambda q: "A", task="train/0").score == 1.0
    with pytest.raises(UsageError, match="index_base must be 0 or 1"):
        ChoiceJudge(index_base=2)
