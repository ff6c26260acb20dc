"""The prefix tree behind guided_choice, on plain token ids (no model needed)."""

from __future__ import annotations

from nenyax.providers.local.constrain import ChoiceConstraint

EOS = frozenset({0})


def _tree(*sequences):
    return ChoiceConstraint(tuple(tuple(s) for s in sequences), EOS)


def test_the_first_token_of_every_choice_may_start_the_reply():
    assert _tree((5, 6), (7,), (5, 8)).allowed([]) == [5, 7]


def test_after_a_prefix_only_its_continuations_are_allowed():
    assert _tree((5, 6), (7,), (5, 8)).allowed([5]) == [6, 8]


def test_a_finished_choice_may_only_end():
    assert _tree((5, 6), (7,)).allowed([7]) == [0]


def test_a_choice_that_prefixes_another_may_end_or_go_on():
    assert _tree((5,), (5, 6)).allowed([5]) == [0, 6]


def test_a_reply_off_every_choice_allows_nothing():
    assert _tree((5, 6)).allowed([9]) == []


def test_from_choices_tokenizes_each_choice_with_the_given_encoder():
    tree = ChoiceConstraint.from_choices(["ab", "c"], lambda text: [ord(ch) for ch in text], EOS)
    assert tree.sequences == ((97, 98), (99,))
