"""The v1 API (verifiers 0.4): an in-memory gsm8k-style Taskset through the null harness in a subprocess."""

import pytest

from nenyax.core import Status, check, load
from nenyax_testsupport.policies import Outage, Scripted

pytestmark = pytest.mark.v1

GSM8K = "verifiers:vf-gsm8k-v1"


@pytest.fixture(scope="module")
def gsm8k():
    env = load(GSM8K)
    yield env
    env.close()


def test_a_taskset_id_loads_with_its_data_ids(gsm8k):
    assert gsm8k.manifest.extra["api"] == "v1"
    assert gsm8k.manifest.extra["runtime"] == "subprocess"
    assert gsm8k.task_ids() == ["gsm8k-0", "gsm8k-1", "gsm8k-2"]
    assert gsm8k.manifest.capabilities.reference_policy


def test_taskset_config_fields_come_from_the_uri():
    env = load("verifiers:vf-gsm8k-v1?num_tasks=1")
    assert env.task_ids() == ["gsm8k-0"]


def test_the_reference_boxes_the_answer_and_scores_one(gsm8k):
    traj = gsm8k.rollout("reference", task="gsm8k-2")
    assert traj.status is Status.OK, traj.error
    assert traj.judgment.score == 1.0
    assert traj.judgment.passed is True
    assert traj.judgment.components["correct"] == 1.0
    assert traj.judgment.components["reply_chars"] == len("\\boxed{624}")
    assert traj.model_calls[0].response["content"] == "\\boxed{624}"


def test_a_wrong_answer_scores_zero_and_the_prompt_reaches_the_policy(gsm8k):
    policy = Scripted("\\boxed{71}")
    traj = gsm8k.rollout(policy, task="gsm8k-0")
    assert traj.status is Status.OK, traj.error
    assert traj.judgment.score == 0.0
    assert "48 of her friends" in policy.seen[0][-1]["content"]


def test_an_outage_is_infra_error_unscored(gsm8k):
    traj = gsm8k.rollout(Outage(), task="gsm8k-0")
    assert traj.status is Status.INFRA_ERROR
    assert traj.judgment is None


def test_a_task_that_raises_inside_the_episode_is_env_error():
    env = load("verifiers:vf_odd_v1:RaisingTaskset")
    traj = env.rollout(Scripted("hi"))
    assert traj.status is Status.ENV_ERROR
    assert traj.judgment is None
    assert "broke on purpose" in traj.error


def test_check_reaches_audited_with_an_answer_field():
    report = check("verifiers:vf-gsm8k-v1?num_tasks=2", samples=2)
    assert report.tier.label == "audited", [(r.id, r.outcome, r.evidence) for r in report.results]


def test_check_without_answers_reaches_trainable():
    env = load("verifiers:vf_odd_v1:NoAnswerTaskset")
    assert env.manifest.capabilities.reference_policy is False
    report = check("verifiers:vf_odd_v1:NoAnswerTaskset", samples=2)
    assert report.tier.label == "trainable", [(r.id, r.outcome, r.evidence) for r in report.results]
