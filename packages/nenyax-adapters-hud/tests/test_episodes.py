"""Episodes through the real hud: LocalRuntime serves the task, OpenAIChatAgent calls the recording proxy."""

import pytest
from support import ARITHMETIC, task_uri

from nenyax.core import Status, load
from nenyax_testsupport.policies import Outage, Scripted

pytestmark = pytest.mark.hud


@pytest.fixture(scope="module")
def arithmetic():
    return load(ARITHMETIC)


def test_the_task_ids_are_hud_slugs_and_the_answers_are_references(arithmetic):
    assert arithmetic.task_ids() == ["add-6348df95", "add-6b1ddef0", "add-bc01043e", "add-8b2a354f"]
    assert arithmetic.manifest.capabilities.reference_policy
    assert arithmetic.manifest.format == "hud"
    assert arithmetic.manifest.extra["runtime"] == "LocalRuntime"


def test_the_reference_answer_scores_one_and_the_null_answer_zero(arithmetic):
    task = arithmetic.task_ids()[1]  # 6 + 7
    ref = arithmetic.rollout("reference", task=task)
    assert ref.status is Status.OK, ref.error
    assert (ref.judgment.score, ref.judgment.passed) == (1.0, True)
    assert ref.model_calls[0].response["content"] == "13"
    null = arithmetic.rollout("null", task=task)
    assert null.status is Status.OK, null.error
    assert (null.judgment.score, null.judgment.passed) == (0.0, False)


def test_the_prompt_reaches_the_policy_as_hud_sends_it(arithmetic):
    policy = Scripted("The answer is 7.")
    traj = arithmetic.rollout(policy, task=arithmetic.task_ids()[0])  # 3 + 4
    assert traj.status is Status.OK, traj.error
    assert traj.judgment.score == 1.0
    content = policy.seen[0][-1]["content"]
    text = content if isinstance(content, str) else " ".join(part["text"] for part in content)
    assert "What is 3 + 4?" in text
    assert traj.messages[-1] == {"role": "assistant", "content": "The answer is 7."}


def test_a_file_uri_loads_its_named_list():
    env = load(task_uri("odd", "words"))
    assert [slug.split("-")[0] for slug in env.task_ids()] == ["echo", "echo"]
    traj = env.rollout("reference", task=env.task_ids()[1])
    assert traj.status is Status.OK, traj.error
    assert traj.judgment.score == 1.0


def test_a_grade_with_a_breakdown_keeps_it_as_components():
    traj = load(task_uri("odd", "GRADED")).rollout(Scripted("x"))
    assert traj.status is Status.OK, traj.error
    assert traj.judgment.score == 0.5
    assert traj.judgment.passed is False
    assert traj.judgment.feedback == "half marks"
    assert traj.judgment.components == {"reward": 0.5, "length": 3.0, "subscore:spelling": 1.0, "subscore:style": 0.0}


def test_a_grader_that_raises_is_verifier_error_unscored():
    traj = load(task_uri("odd", "BROKEN_GRADER")).rollout(Scripted("x"))
    assert traj.status is Status.VERIFIER_ERROR
    assert traj.judgment is None
    assert "the grader broke on purpose" in traj.error


def test_an_error_grade_is_verifier_error_unscored():
    traj = load(task_uri("odd", "ERROR_GRADE")).rollout(Scripted("x"))
    assert traj.status is Status.VERIFIER_ERROR
    assert traj.judgment is None
    assert "grading service was unavailable" in traj.error


def test_a_template_that_raises_before_its_prompt_is_env_error():
    traj = load(task_uri("odd", "BROKEN_SETUP")).rollout(Scripted("x"))
    assert traj.status is Status.ENV_ERROR
    assert traj.judgment is None
    assert "the setup broke on purpose" in traj.error


def test_a_runtime_that_cannot_start_is_infra_error_unscored():
    traj = load(task_uri("odd", "DOWN")).rollout(Scripted("x"))
    assert traj.status is Status.INFRA_ERROR
    assert traj.judgment is None
    assert "did not start" in traj.error


def test_a_provider_outage_is_infra_error_not_a_zero(arithmetic):
    traj = arithmetic.rollout(Outage())
    assert traj.status is Status.INFRA_ERROR
    assert traj.judgment is None


def test_concurrent_episodes_of_one_environment_all_finish(arithmetic):
    # hud's LocalRuntime runs episodes of one Environment instance one at a time; none is lost or mixed up.
    trajectories = arithmetic.rollouts("reference", n=2, concurrency=8)
    assert len(trajectories) == 8
    assert [t.status for t in trajectories] == [Status.OK] * 8
    assert {t.task_id for t in trajectories} == set(arithmetic.task_ids())
    assert all(t.judgment.score == 1.0 for t in trajectories)
