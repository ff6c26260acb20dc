"""The `acme` learner's own promise: what the conformance kit cannot know it should learn."""

from nenyax.testing.checks.learner import sample_groups

from nenyax_acme.learner import AcmeLearner


def test_it_remembers_each_tasks_best_answer():
    learner = AcmeLearner()
    metrics = learner.update(sample_groups())  # one task: answers "4" (scored 1), "5" (0) and a policy error
    assert learner.memory == {"add/0": {"score": 1.0, "actions": ["4"], "seen": 3}}
    assert metrics == {"improved": 1.0, "tasks_known": 1.0}
    assert learner.policy().info.revision == learner.revision != AcmeLearner().revision
