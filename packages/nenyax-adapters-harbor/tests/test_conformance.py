"""The adapter conformance kit on the shipped examples (one dataset URI: three tasks, real trials)."""

import pytest

from nenyax.adapters.harbor.adapter import EXAMPLES_DIR, HarborAdapter, example_task
from nenyax.core import default_registry, load
from nenyax.testing import AdapterConformance, Subject


class TestHarborConformance(AdapterConformance):
    plugin = "harbor"

    @pytest.fixture
    def subject(self):
        adapter = HarborAdapter()
        return Subject(kind="adapter", name=self.plugin, registry=default_registry(), installed=True, instance=adapter)


def test_examples_are_the_shipped_tasks():
    (dataset,) = HarborAdapter().examples()
    assert str(EXAMPLES_DIR) in dataset
    env = load(dataset)
    assert env.task_ids() == ["count-lines", "hello-file", "reverse-words"]
    caps = env.manifest.capabilities
    assert caps.reference_policy
    assert caps.null_policy
    assert caps.stable_task_ids
    assert load(example_task("hello-file")).task_ids() == ["hello-file"]
