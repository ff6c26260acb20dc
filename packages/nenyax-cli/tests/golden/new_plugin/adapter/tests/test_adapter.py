"""The `acme:reverse` environment itself: what the conformance kit cannot know it should do."""

import pytest
from nenyax.core import BadURIError, load


def test_the_reversed_word_scores_one_and_anything_else_zero():
    env = load("acme:reverse")
    right = env.rollout(lambda observation: observation.split()[3][::-1], task="reverse/apple")
    wrong = env.rollout(lambda observation: "apple", task="reverse/apple")
    assert right.steps[0].observation == "Spell the word apple backwards."
    assert right.judgment.score == 1.0
    assert wrong.judgment.score == 0.0


def test_the_words_option_lists_that_many_tasks_and_refuses_a_bad_value():
    assert load("acme:reverse?words=3").task_ids() == ["reverse/apple", "reverse/banana", "reverse/cherry"]
    with pytest.raises(BadURIError, match="words in 'acme:reverse\\?words=0' must be an integer from 1 to 20"):
        load("acme:reverse?words=0")
    with pytest.raises(BadURIError, match="Did you mean 'words'"):
        load("acme:reverse?word=3")
