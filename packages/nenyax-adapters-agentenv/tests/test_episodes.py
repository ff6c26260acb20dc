"""Episodes of the shipped quiz: AgentEnv runs each task, the policy plays its agent through the proxy, and
AgentEnv's verifiers judge. The reference (the words the response checks look for) passes; null scores 0."""

import pytest
from support import QUIZ, QUIZ_TASKS, asking, write_bundle

from nenyax.core import Status, load

pytestmark = pytest.mark.agentenv


@pytest.fixture(scope="module")
def quiz():
    env = load(f"agentenv:{QUIZ}")
    yield env
    env.close()


def test_the_tasks_are_the_bundles_task_files(quiz):
    assert quiz.task_ids() == sorted(QUIZ_TASKS)
    assert quiz.manifest.format == "agentenv"
    assert quiz.manifest.capabilities.reference_policy is True
    assert quiz.manifest.extra["tasks"]["sum"]["id"].endswith("/sum")  # AgentEnv's own id for the task


@pytest.mark.parametrize("task", QUIZ_TASKS)
def test_the_reference_passes_and_null_scores_zero(quiz, task):
    ref = quiz.rollout("reference", task=task)
    assert ref.status is Status.OK, ref.error
    assert ref.judgment.score == 1.0
    assert ref.judgment.passed is True
    # Every criterion AgentEnv checked is a component, and its justification the feedback.
    assert any(key.endswith(":0") for key in ref.judgment.components)
    assert "all needles present" in ref.judgment.feedback
    assert [m["role"] for m in ref.messages] == ["user", "assistant"]
    null = quiz.rollout("null", task=task)
    assert null.status is Status.OK, null.error
    assert null.judgment.score == 0.0
    assert null.judgment.passed is False
    assert len(null.model_calls) == 1


def test_a_policy_that_answers_half_scores_what_agentenvs_verifiers_give(tmp_path):
    # Two verifiers on one reply: AgentEnv scores each (all its criteria must pass), the judgment is their mean.
    checks = [
        {
            "type": "agent_prompt_response_verifier",
            "id": "a",
            "prompt_id": "ask",
            "verifier_id": "a",
            "criteria": [{"type": "response_contains", "needles": ["alpha"]}],
        },
        {
            "type": "agent_prompt_response_verifier",
            "id": "b",
            "prompt_id": "ask",
            "verifier_id": "b",
            "criteria": [{"type": "response_contains", "needles": ["beta"]}],
        },
    ]
    env = load(f"agentenv:{write_bundle(tmp_path / 'b', two=asking('Say alpha and beta.', *checks))}")
    traj = env.rollout(lambda _observation: "alpha only", task="two")
    assert traj.status is Status.OK, traj.error
    assert traj.judgment.score == 0.5
    assert traj.judgment.passed is False
    assert traj.judgment.components["verifier:a"] == 1.0
    assert traj.judgment.components["verifier:b"] == 0.0


def test_a_verifier_that_fails_is_a_verifier_error_not_a_zero(tmp_path):
    # The rubric judge calls a model that is not there: AgentEnv's verifier step fails, and the run with it.
    rubric = {
        "type": "rubrics_verifier",
        "id": "judge",
        "prompt_id": "ask",
        "verifier_id": "judge",
        "use_agent_judge": False,
        "use_trajectory": False,
        "default_model": "openai/absent",
        "criteria": [{"id": "polite", "criterion": "The reply is polite"}],
    }
    bundle = write_bundle(tmp_path / "b", judged=asking("Say hello.", rubric))
    env = load(f"agentenv:{bundle}")
    assert env.manifest.capabilities.reference_policy is False  # a rubric states no gold answer
    traj = env.rollout("null")
    assert traj.status is Status.VERIFIER_ERROR, (traj.status, traj.error)
    assert traj.judgment is None
    assert "rubrics_verifier" in traj.error
