"""The run summary's figures on hand-made episodes, each worked out by hand: tokens, statuses, thresholds, pass@k.

The episodes are the in-memory `arith` fake's, with judgments and model calls set by the test (core installs
no adapter or model); every expected number below is written out, not computed by the code under test.
"""

import math

import attrs
import orjson
import pytest

from nenyax.core.contract import serde
from nenyax.core.contract.trajectory import Judgment, ModelCall, Status
from nenyax.core.engine.summary import Summary, pass_at_k, passed, summarize, tokens
from nenyax_testsupport.fakes import ArithEnvironment


@pytest.fixture(scope="module")
def episodes():
    env = ArithEnvironment("arith:add?size=4", size=4, seed=0)
    return env.rollouts("reference", 4, n=2)


def _call(**fields):
    return ModelCall(messages=({"role": "user", "content": "?"},), response={"role": "assistant"}, **fields)


def test_tokens_count_token_ids_where_recorded_else_the_servers_usage(episodes):
    calls = (
        _call(prompt_token_ids=(1, 2, 3), completion_token_ids=(4, 5), usage={"prompt_tokens": 99}),
        _call(usage={"prompt_tokens": 10, "completion_tokens": 4}),
        _call(usage={"prompt_tokens": None}),  # a server that sends nulls counts nothing
        _call(prompt_token_ids=(), completion_token_ids=(7,)),
    )
    traj = attrs.evolve(episodes[0], model_calls=calls)
    assert tokens(traj) == (3 + 10, 2 + 4 + 1)
    assert tokens(episodes[0]) == (0, 0)
    other = attrs.evolve(episodes[1], model_calls=calls[1:2])
    summary = summarize([traj, other])
    assert (summary.tokens_in, summary.tokens_out) == (13 + 10, 7 + 4)


def test_passed_is_the_judges_word_else_the_threshold():
    assert passed(_with(Judgment(score=0.2, passed=True)), 1.0) is True
    assert passed(_with(Judgment(score=1.0, passed=False)), 0.0) is False
    assert passed(_with(Judgment(score=0.5)), 0.5) is True  # at the threshold passes
    assert passed(_with(Judgment(score=0.49)), 0.5) is False
    assert passed(_with(None), 0.0) is False


def _with(judgment):
    env = ArithEnvironment("arith:add?size=1", size=1, seed=0)
    return attrs.evolve(env.rollout("reference"), judgment=judgment)


def test_failures_are_counted_never_scored_and_policy_errors_score_0(episodes):
    a, b, c, d, e, f, g, h = episodes
    trajs = [
        attrs.evolve(a, status=Status.INFRA_ERROR, judgment=None),
        attrs.evolve(b, status=Status.VERIFIER_ERROR, judgment=None),
        attrs.evolve(c, status=Status.POLICY_ERROR, judgment=Judgment(score=0.0, passed=False)),
        attrs.evolve(d, judgment=Judgment(score=0.5)),  # no `passed`: the threshold decides
        e,
        f,
        g,
        h,
    ]
    summary = summarize(trajs, samples=2, threshold=0.5, wall_s=4.0)
    assert (summary.episodes, summary.scored, summary.tasks) == (8, 6, 4)
    assert summary.statuses["infra_error"] == 1
    assert summary.statuses["verifier_error"] == 1
    assert summary.statuses["policy_error"] == 1
    assert summary.statuses["ok"] == 5
    assert sum(summary.statuses.values()) == 8
    assert set(summary.statuses) == {s.value for s in Status}
    assert summary.mean == pytest.approx((0 + 0.5 + 4) / 6)
    # Task 0: nothing scored (skipped); task 1: a fail and a pass (0.5 at threshold 0.5 passes); tasks 2, 3: two passes.
    assert summary.pass_at_k == pytest.approx({"1": (0.5 + 1 + 1) / 3, "2": 1.0})
    assert summary.pass_threshold == 0.5
    assert summary.episodes_per_s == 2.0


def test_one_scored_episode_has_no_interval_and_none_has_no_mean(episodes):
    one = summarize(episodes[:1], samples=3)
    assert (one.mean, one.stdev, one.ci95) == (1.0, None, None)
    assert one.pass_at_k == {"1": 1.0}  # k = 2 and 3 need that many scored samples of a task
    assert one.wall_s is None
    assert one.episodes_per_s is None
    assert one.resumed == 0
    none = summarize([attrs.evolve(episodes[0], status=Status.INFRA_ERROR, judgment=None)])
    assert (none.mean, none.scored, none.pass_at_k, none.episodes) == (None, 0, {}, 1)
    assert summarize([], wall_s=0.0).episodes_per_s is None


def test_two_scores_give_the_sample_deviation_and_a_wilson_interval(episodes):
    trajs = [episodes[0], attrs.evolve(episodes[1], judgment=Judgment(score=0.0, passed=False))]
    summary = summarize(trajs, samples=2)
    # Scores 1 and 0: mean 1/2, sample variance ((1/2)**2 * 2) / 1 = 1/2.
    assert summary.stdev == pytest.approx(math.sqrt(0.5))
    # The Wilson interval of 1 of 2 (the normal one would be [-0.48, 1.48], outside the score range).
    assert summary.ci95 == pytest.approx((0.09453, 0.90547), abs=1e-5)
    assert summary.ci_method == "wilson"
    assert summary.pass_at_k == pytest.approx({"1": 0.5, "2": 1.0})


def test_the_summary_round_trips_through_its_json_form(episodes):
    summary = summarize(episodes, samples=2, wall_s=1.0, resumed=3)
    data = orjson.loads(serde.dumps(summary))
    assert data["ci95"] is None or isinstance(data["ci95"], list)
    assert data["episodes"] == 8
    assert data["resumed"] == 3
    assert data["episodes_per_s"] == 5.0
    later = serde.from_data({**data, "added_later": 1}, Summary)
    assert later == summary
    assert later.unknown_fields == {"added_later": 1}
    spread = summarize([episodes[0], attrs.evolve(episodes[1], judgment=Judgment(score=0.0))], samples=1)
    data = orjson.loads(serde.dumps(spread))
    assert isinstance(data["ci95"], list)
    assert len(data["ci95"]) == 2
    back = serde.from_data(data, Summary)
    assert back == spread
    assert isinstance(back.ci95, tuple)


@pytest.mark.parametrize(("n", "c", "k"), [(3, 4, 1), (3, -1, 1), (3, 1, 0), (3, 1, 4)])
def test_pass_at_k_refuses_impossible_counts(n, c, k):
    with pytest.raises(ValueError, match=rf"^pass@k needs 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}\.$"):
        pass_at_k(n, c, k)


def test_pass_at_k_edges():
    assert pass_at_k(3, 0, 1) == 0.0
    assert pass_at_k(3, 3, 3) == 1.0
    assert pass_at_k(3, 1, 3) == 1.0  # n - c < k: every k-subset holds the pass
    assert pass_at_k(4, 1, 1) == pytest.approx(0.25)
    assert pass_at_k(4, 2, 2) == pytest.approx(5 / 6)


def _scored(episodes, scores):
    return [attrs.evolve(episodes[0], judgment=Judgment(score=s, passed=None)) for s in scores]


def test_an_interval_never_leaves_the_score_range(episodes):
    # 2 of 40 passed, the case that read [-0.001, 0.002] with the normal approximation at 1 of 1000.
    rare = summarize(_scored(episodes, [1.0] * 2 + [0.0] * 38))
    assert rare.ci95 == pytest.approx((0.01382, 0.16504), abs=1e-5)
    none = summarize(_scored(episodes, [0.0] * 40))
    assert none.ci95[0] == 0.0
    assert 0.08 < none.ci95[1] < 0.09  # 0 of 40 is still uncertain, and the interval says so
    one_in_a_thousand = summarize(_scored(episodes, [1.0] + [0.0] * 999))
    assert 0.0 <= one_in_a_thousand.ci95[0] < 0.001 < one_in_a_thousand.ci95[1]


def test_graded_scores_get_a_seeded_bootstrap_inside_their_range(episodes):
    scores = [0.0] * 30 + [0.25, 0.5, 0.02, 0.01]
    first = summarize(_scored(episodes, scores))
    assert first.ci_method == "bootstrap"
    low, high = first.ci95
    assert 0.0 <= low < first.mean < high <= 0.5
    assert summarize(_scored(episodes, scores)).ci95 == first.ci95  # the same scores, the same interval
    assert summarize(_scored(episodes, [0.3, 0.3])).ci95 == (0.3, 0.3)  # no spread, no width
