"""The adapter conformance kit, on the shipped tasks and the tests' local task files."""

import pytest
from support import task_uri

from nenyax.adapters.lm_eval.adapter import EXAMPLES, LmEvalAdapter
from nenyax.core import default_registry
from nenyax.testing import AdapterConformance, Subject

pytestmark = pytest.mark.lm_eval


class TestLmEvalConformance(AdapterConformance):
    plugin = "lm_eval"

    @pytest.fixture
    def subject(self):
        adapter = LmEvalAdapter(examples=[*EXAMPLES, task_uri("gsm_style"), task_uri("colors")])
        return Subject(kind="adapter", name=self.plugin, registry=default_registry(), installed=True, instance=adapter)


def test_the_default_examples_are_the_shipped_tasks():
    assert LmEvalAdapter().examples() == ["lm_eval:nenyax_arith", "lm_eval:nenyax_capitals"]
