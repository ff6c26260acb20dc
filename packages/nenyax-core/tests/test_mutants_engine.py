"""Pins found by mutation testing (issue 17) in the run summary's figures (`nenyax.core.engine.summary`).

Each test asserts what a user of `nenyax eval`'s summary relies on and that a surviving mutant changed:
the normal approximation past `NORMAL_FROM` graded scores, the bootstrap's size past `BOOTSTRAP_MAX_WORK`,
that a failed episode is never scored even when it carries a judgment, and `summarize`'s defaults. The
expected numbers are worked out by hand in the comments (tests/README.md, "Mutation testing", lists the
mutants that live and why). The episodes are the in-memory `arith` fake's (core installs no adapter).
"""

import math

import attrs
import pytest

from nenyax.core.contract.trajectory import Judgment, ModelCall, Status
from nenyax.core.engine.summary import NORMAL_FROM, Z_95, interval, summarize, tokens
from nenyax_testsupport.fakes import ArithEnvironment


@pytest.fixture(scope="module")
def episode():
    return ArithEnvironment("arith:add?size=2", size=2, seed=0).rollout("reference")


def test_past_normal_from_graded_scores_get_the_normal_interval_around_the_mean():
    # 10,000 scores of 0.25, 10,000 of 0.75 and one 0.5: mean 0.5, every deviation 0.25 but one (0), so the
    # sample variance is 20,000 * 0.0625 / 20,000 = 0.0625 and the standard deviation 0.25.
    scores = [0.25, 0.75] * 10_000 + [0.5]
    assert len(scores) == NORMAL_FROM + 1
    (low, high), method = interval(scores)
    half = Z_95 * 0.25 / math.sqrt(20_001)  # about 0.003465
    assert method == "normal"
    assert low == pytest.approx(0.5 - half, abs=1e-9)
    assert high == pytest.approx(0.5 + half, abs=1e-9)


def test_the_normal_interval_is_clipped_to_the_range_the_scores_span():
    # 20,000 scores of 0.9 and one of 0.2: the mean (0.89997) plus half a width (0.00007) passes 0.9, the
    # highest score, so the upper bound is 0.9; the mirror case clips the lower bound at 0.1.
    (low, high), method = interval([0.9] * 20_000 + [0.2])
    assert method == "normal"
    assert high == 0.9
    assert 0.8998 < low < 0.89997
    (low, high), _ = interval([0.1] * 20_000 + [0.8])
    assert low == 0.1
    assert 0.10003 < high < 0.1002


def test_exactly_normal_from_graded_scores_still_get_the_bootstrap():
    _bounds, method = interval([0.25, 0.75] * (NORMAL_FROM // 2))
    assert method == "bootstrap"


def test_a_bootstrap_of_many_scores_is_about_the_normal_interval():
    # 3,000 graded scores (past BOOTSTRAP_MAX_WORK / BOOTSTRAP_RESAMPLES = 1,000, so 666 resamples): 1,000 each
    # of 0, 0.5 and 1. Mean 0.5, standard deviation sqrt(2/3 * 0.25 * 3000/2999) = 0.40831, so the 95%
    # interval is about 0.5 -+ 1.96 * 0.40831 / sqrt(3000) = 0.5 -+ 0.01461; a percentile bootstrap lands
    # within a tenth of that width of it (its lower and upper 2.5% of the resampled means, not their extremes).
    scores = [0.0, 0.5, 1.0] * 1_000
    (low, high), method = interval(scores)
    assert method == "bootstrap"
    half = 1.959963984540054 * math.sqrt(2 / 3 * 0.25 * 3000 / 2999) / math.sqrt(3000)
    assert low == pytest.approx(0.5 - half, abs=half / 10)
    assert high == pytest.approx(0.5 + half, abs=half / 10)
    assert interval(scores) == ((low, high), "bootstrap")  # seeded: the same scores, the same interval


def test_a_failed_episode_carrying_a_judgment_is_counted_never_scored(episode):
    # A timeout (or any failure) is counted under its status even if a judgment was attached to it.
    failed = attrs.evolve(episode, status=Status.TIMEOUT, judgment=Judgment(score=0.0, passed=False))
    summary = summarize([episode, failed])
    assert summary.scored == 1
    assert summary.mean == 1.0
    assert summary.statuses["timeout"] == 1
    assert summary.pass_at_k == {"1": 1.0}


def test_summarize_defaults_to_one_sample_and_a_pass_at_a_score_of_1(episode):
    graded = attrs.evolve(episode, judgment=Judgment(score=1.0, passed=None))
    summary = summarize([graded, graded])
    assert summary.samples == 1
    assert summary.pass_threshold == 1.0
    assert summary.pass_at_k == {"1": 1.0}  # a score of 1.0 passes at the default threshold
    near = attrs.evolve(episode, judgment=Judgment(score=0.99, passed=None))
    assert summarize([near]).pass_at_k == {"1": 0.0}


def test_a_call_whose_usage_names_no_token_counts_counts_nothing(episode):
    call = ModelCall(messages=({"role": "user", "content": "?"},), response={"role": "assistant"}, usage={})
    assert tokens(attrs.evolve(episode, model_calls=(call, call))) == (0, 0)
