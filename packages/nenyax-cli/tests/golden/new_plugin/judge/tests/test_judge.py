"""The `acme` judge's own rule: what the conformance kit cannot know it should decide."""

import pytest
from nenyax.core import VerifierFailure

from nenyax_acme.judge import AcmeJudge


def test_case_and_surrounding_space_do_not_matter_unless_asked():
    assert AcmeJudge().judge("  Paris ", "paris").passed
    assert not AcmeJudge(case_sensitive=True).judge("Paris", "paris").passed
    assert AcmeJudge().judge("42", 42).score == 1.0


def test_a_reference_it_cannot_use_is_a_verifier_failure():
    with pytest.raises(VerifierFailure, match="gold answer"):
        AcmeJudge().judge("4", None)
