"""The `acme:reverse` environment itself: what the conformance kit cannot know it should do."""

from nenyax.core import load


def test_the_reversed_word_scores_one_and_anything_else_zero():
    env = load("acme:reverse")
    right = env.rollout(lambda observation: observation.split()[3][::-1], task="reverse/apple")
    wrong = env.rollout(lambda observation: "apple", task="reverse/apple")
    assert right.steps[0].observation == "Spell the word apple backwards."
    assert right.judgment.score == 1.0
    assert wrong.judgment.score == 0.0
