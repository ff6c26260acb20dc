"""Loglikelihood tasks: the embedded model scores echoed prompts, and lm-eval's metrics judge."""

import math

import pytest
from support import task_uri

from nenyax.core import Endpoint, Status, UnsupportedPolicyError, check, load
from nenyax_testsupport.policies import Scripted

pytestmark = pytest.mark.lm_eval


@pytest.fixture(scope="module")
def model():
    return Endpoint("local:smollm2-135m")


@pytest.mark.model
def test_multiple_choice_loglikelihoods_are_the_models_own(model):
    """The adapter's loglikelihoods equal lm-eval's own Hugging Face model's on the same weights.

    lm-eval's `HFLM` is given the embedded model's converted checkpoint (from the local provider's
    cache, so nothing is downloaded) and scores the same requests: an independent computation.
    """
    import torch
    from lm_eval.models.huggingface import HFLM
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from nenyax.providers.local.models import materialize, resolve_model

    traj = load(task_uri("colors")).rollout(model, task="colors/1")
    assert traj.status is Status.OK, traj.error
    assert len(traj.model_calls) == 3  # one echoed prompt per choice
    assert all(call.prompt_logprobs for call in traj.model_calls)
    ours = [resp[0][0] for resp in traj.info["resps"]]

    folder, _ = materialize(resolve_model("smollm2-135m"))
    weights = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, local_files_only=True)
    hf = HFLM(pretrained=weights, tokenizer=AutoTokenizer.from_pretrained(folder, local_files_only=True), batch_size=1)
    requests = [
        type("Request", (), {"args": ("Question: What colour is this? Fresh grass.\nAnswer:", f" {c}")})()
        for c in ("purple", "green", "black")
    ]
    theirs = [ll for ll, _greedy in hf.loglikelihood(requests, disable_tqdm=True)]
    assert ours == pytest.approx(theirs, abs=1e-3)
    best = max(range(3), key=lambda i: ours[i])
    assert traj.judgment.components["acc"] == (1.0 if best == 1 else 0.0)
    assert traj.messages[-1]["content"] == (" purple", " green", " black")[best]


@pytest.mark.model
def test_two_documents_of_the_shipped_multiple_choice_task_get_real_scores(model):
    env = load("lm_eval:nenyax_capitals")
    for task in env.task_ids(limit=2):
        traj = env.rollout(model, task=task)
        assert traj.status is Status.OK, traj.error
        lls = [resp[0][0] for resp in traj.info["resps"]]
        assert len(set(lls)) == 3
        assert all(ll < 0 for ll in lls)
        assert set(traj.judgment.components) == {"acc", "acc_norm"}
        assert traj.judgment.passed is (traj.judgment.score == 1.0)


@pytest.mark.model
def test_a_rolling_loglikelihood_task_gives_lm_evals_perplexities(model):
    traj = load(task_uri("rolling")).rollout(model, task="rolling_text/1")
    assert traj.status is Status.OK, traj.error
    (call,) = traj.model_calls
    assert call.prompt == "Paris is the capital of France."
    logprob = sum(item["logprob"] for item in call.prompt_logprobs if item["logprob"] is not None)
    words = 6  # lm-eval counts words by whitespace: "Paris is the capital of France."
    assert traj.judgment.components["word_perplexity"] == pytest.approx(math.exp(-logprob / words))
    assert traj.judgment.passed is None  # a perplexity is no pass/fail


def test_a_policy_that_is_no_model_picks_a_choice_by_naming_it():
    env = load(task_uri("colors"))
    policy = Scripted("Green")
    traj = env.rollout(policy, task="colors/1")
    assert [m[-1]["content"] for m in policy.seen] == [
        "Question: What colour is this? Fresh grass.\nAnswer:"
    ]  # asked once, not per choice
    assert traj.judgment.score == 1.0
    assert traj.judgment.components == {"acc": 1.0, "acc_norm": 1.0}
    none = env.rollout(Scripted("no idea"), task="colors/1")
    assert none.status is Status.OK
    assert none.judgment.score == 0.0
    assert "names none of the choices" in none.judgment.feedback
    reference = env.rollout("reference", task="colors/2")
    assert reference.model_calls[0].response["content"] == "yellow"  # the reference names the gold choice
    assert reference.messages[-1]["content"] == " yellow"  # the transcript's answer: the continuation picked
    assert reference.judgment.score == 1.0


def test_the_multiple_choice_task_reaches_audited_through_named_choices():
    report = check(task_uri("colors"), samples=3)
    assert report.tier.label == "audited", [(r.id, r.outcome, r.evidence) for r in report.results]


def test_a_rolling_task_refuses_policies_that_cannot_score_text():
    env = load(task_uri("rolling"))
    caps = env.manifest.capabilities
    assert not caps.reference_policy
    assert not caps.null_policy
    assert not caps.random_policy
    assert "scores text" in env.manifest.extra["no_reference"]
    with pytest.raises(UnsupportedPolicyError, match="model that scores text"):
        env.rollout("null", task="rolling_text/0")
    # Only a model can play it: `check` without one says so (a skip: no tier is claimed)...
    report = check(task_uri("rolling"), samples=2)
    starts = next(r for r in report.results if r.id == "connectable/episode-starts")
    assert starts.outcome.value == "skipped"
    assert "--model M` plays it with a model" in starts.evidence
    assert report.tier.label == "none"  # an episode that cannot start is not even connectable


@pytest.mark.model
def test_check_with_a_model_plays_a_task_only_a_model_can(model):
    report = check(task_uri("rolling"), samples=2, model=model)
    outcomes = {r.id: r.outcome.value for r in report.results}
    assert outcomes["connectable/episode-starts"] == "passed"
    assert outcomes["evaluable/episode-completes"] == "passed"
    # Replays and the deliberate failures need an in-process policy: skipped, so trainable is not claimed.
    assert outcomes["trainable/seed-recreates"] == "skipped"
    assert outcomes["trainable/failures-classified"] == "skipped"
    assert report.tier.label == "evaluable"
