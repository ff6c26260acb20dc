"""The shared answer-extraction rules: only a final answer counts."""

import pytest

from nenyax.core.engine.answers import ANSWER_RULES, extract_answer, last_boxed


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        # the answer tag, the last one; a box inside it wins over the rest of the tag
        ("thinking...\n<answer> 42 </answer>", "42"),
        ("<answer>1</answer> no wait <answer>2</answer>", "2"),
        ("<answer>So it is \\boxed{\\frac{1}{2}} overall</answer>", "\\frac{1}{2}"),
        ("<answer>x = 3</answer>", "x = 3"),
        # the tag wins over a box outside it
        ("\\boxed{7}\n<answer>8</answer>", "8"),
        # the last box, braces balanced
        ("first \\boxed{1}, then \\boxed{\\dfrac{a}{b}}", "\\dfrac{a}{b}"),
        ("so the result is \\boxed{\\frac{1}{2}}", "\\frac{1}{2}"),
        # "the answer is" / "Answer:", the last one, to the end of its sentence
        ("Let me add.\nThe answer is 17.", "17"),
        ("Final answer: cat", "cat"),
        ("**Answer:** 3.5", "3.5"),
        ("The final answer is: $\\frac{3}{4}$. I checked it twice.", "$\\frac{3}{4}$"),
        ("The answer is 4.\nNo, wait: the answer is 5. Done.", "5"),
        # a bare one-line reply is its own answer
        ("  12  ", "12"),
        ("x = 3", "x = 3"),
        ("Yes", "Yes"),
        # working without a marked answer is not an answer: no '=' or last line or last number
        ("5 + 3\n8", ""),
        ("Let me compute.\nSo 2 + 3 = 5 and 5 * 2 = 10", ""),
        ("We have x = 4.\nHence y = 9", ""),
        ("", ""),
    ],
)
def test_only_the_final_answer_is_extracted(reply, answer):
    assert extract_answer(reply) == answer


def test_a_sentence_saying_nothing_after_the_phrase_is_not_an_answer():
    # "what the answer is." marks nothing; the earlier "Answer: 6" does.
    assert extract_answer("Answer: 6\nI wonder what the answer is.\nmore working") == "6"


def test_unbalanced_box_is_ignored():
    assert last_boxed("\\boxed{1 + {2}") is None
    assert extract_answer("\\boxed{1 + {2}\nthe answer is 3") == "3"


def test_rules_text_names_every_rule():
    for fragment in ("<answer>", "\\boxed", "the answer is", "single line", "'='"):
        assert fragment in ANSWER_RULES
