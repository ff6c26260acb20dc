"""generate_until tasks: lm-eval's prompt goes to the proxy as a raw completion, lm-eval's metric judges."""

import pytest
from support import task_uri

from nenyax.core import Endpoint, Status, check, load
from nenyax_testsupport.policies import Scripted

pytestmark = pytest.mark.lm_eval


def test_a_task_file_reaches_audited_with_its_gold_targets():
    report = check(task_uri("gsm_style"), samples=4)
    assert report.tier.label == "audited", [(r.id, r.outcome, r.evidence) for r in report.results]


def test_the_shipped_generation_task_reaches_audited():
    report = check("lm_eval:nenyax_arith", samples=3)
    assert report.tier.label == "audited", [(r.id, r.outcome, r.evidence) for r in report.results]


def test_the_reference_reply_is_written_for_the_tasks_filter():
    # gsm_style scores what its strict filter reads after '#### ': the plain gold '42' would score 0.
    traj = load(task_uri("gsm_style")).rollout("reference", task="gsm_style/1")
    assert traj.messages[-1]["content"] == "#### 42"
    assert traj.judgment.score == 1.0
    assert traj.judgment.passed is True
    assert traj.judgment.components == {"exact_match": 1.0}
    assert traj.info["filtered_resps"] == ["42"]


def test_the_reply_is_cut_at_the_tasks_stop_strings_and_scored_by_lm_eval():
    policy = Scripted("#### 7\n\nQuestion: something else #### 8")
    traj = load(task_uri("gsm_style")).rollout(policy, task="gsm_style/0")
    assert traj.status is Status.OK
    assert [m[-1]["content"] for m in policy.seen] == [
        "Question: Tom has 3 apples and buys 4 more. How many apples does he have?\nAnswer:"
    ]
    assert traj.info["resps"] == [["#### 7"]]  # cut at lm-eval's until string "\n\n", as its own models do
    assert traj.judgment.score == 1.0
    wrong = load(task_uri("gsm_style")).rollout(Scripted("#### 8"), task="gsm_style/0")
    assert wrong.judgment.score == 0.0
    assert wrong.judgment.passed is False


def test_num_fewshot_puts_lm_evals_examples_in_the_prompt_the_same_every_time():
    env = load(task_uri("gsm_style", "?num_fewshot=2"))
    prompts = []
    for task in ("gsm_style/2", "gsm_style/0", "gsm_style/2"):
        policy = Scripted("#### 1")
        env.rollout(policy, task=task)
        prompts.append(policy.seen[0][-1]["content"])
    assert prompts[0] == prompts[2]  # doc 2's few-shot examples do not depend on what ran before
    assert prompts[0].count("Question:") == 3
    assert prompts[0].endswith("How many are left?\nAnswer:")
    assert env.manifest.extra["num_fewshot"] == 2


@pytest.mark.model
def test_the_embedded_model_answers_a_raw_prompt():
    traj = load("lm_eval:nenyax_arith").rollout(Endpoint("local:smollm2-135m"), task="nenyax_arith/0")
    assert traj.status is Status.OK, traj.error
    (call,) = traj.model_calls
    assert call.provider == "local"
    assert call.prompt == "Question: What is 3 + 4?\nAnswer:"  # a raw completion: no chat template
    assert call.params["max_tokens"] == 16
    assert call.params["temperature"] == 0.0
    assert traj.judgment.score in (0.0, 1.0)
    assert traj.judgment.components == {"exact_match": traj.judgment.score}
