import json
import sys

import pytest

from nenyax.adapters.datasets.judges import ExactJudge, NumericJudge, normalize, parse_number
from nenyax.adapters.datasets.mathjudge import MathJudge
from nenyax.core import Judgment, Registry, VerifierFailure, hookimpl, load
from nenyax.core.hookspecs import PluginSpec


@pytest.mark.parametrize(
    ("answer", "gold", "ok"),
    [
        ("Paris.", "paris", True),
        ("  The   Eiffel-Tower ", "the eiffel-tower", True),
        ("-3", "3", False),
        ("3.5", "35", False),
        ("New York", "York", False),
        ("", "x", False),
    ],
)
def test_exact(answer, gold, ok):
    assert ExactJudge().judge(answer, gold).passed is ok


def test_exact_accepts_a_list_of_golds():
    assert ExactJudge().judge("NYC", ["New York", "nyc"]).score == 1.0
    assert normalize("Hello, World!") == "hello world"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1,234.5", 1234.5),
        ("$3", 3.0),
        ("50%", 50.0),
        ("3/4", 0.75),
        ("-2e-3", -0.002),
        ("\\frac{1}{2}", 0.5),
        ("x", None),
    ],
)
def test_parse_number(text, value):
    assert parse_number(text) == value


def test_numeric_tolerance():
    assert NumericJudge().judge("0.3333", "1/3").score == 0.0
    assert NumericJudge(tolerance=1e-3).judge("0.3333", "1/3").score == 1.0
    assert NumericJudge().judge("0.33333333", "1/3").score == 1.0
    assert NumericJudge().judge("banana", "3").score == 0.0  # garbage is scored, not an error
    with pytest.raises(VerifierFailure):
        NumericJudge().judge("3", "three")


@pytest.mark.parametrize(
    ("answer", "gold", "ok"),
    [
        ("\\frac{1}{2}", "0.5", True),
        ("\\dfrac{2}{4}", "\\frac{1}{2}", True),
        ("2\\sqrt{2}", "\\sqrt{8}", True),
        ("x = 3", "3", True),
        ("(x+1)^2", "x^2 + 2x + 1", True),
        ("2^{10}", "1024", True),
        ("\\pi/2", "1.5707963267948966", True),
        ("x^2 + 1", "x^2 - 1", False),
        ("7", "\\frac{1}{2}", False),
        ("__import__('os').system('echo hi')", "0", False),
        ("().__class__", "0", False),
        ("lambda: 1", "1", False),
    ],
)
def test_math_equivalence(answer, gold, ok):
    assert MathJudge().judge(answer, gold).passed is ok


def test_math_judge_through_the_adapter(tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text(json.dumps({"problem": "Half?", "solution": "It is $\\boxed{\\frac{1}{2}}$."}) + "\n")
    env = load(f"hf:{path}?judge=math")
    assert env.session().gold == "\\frac{1}{2}"
    assert env.rollout(lambda q: "<answer>0.5</answer>").score == 1.0
    assert env.rollout(lambda q: "<answer>0.25</answer>").score == 0.0


class _LengthJudge:
    """A third-party judge: passes answers of exactly `size` characters."""

    def __init__(self, size=3):
        self.size = int(size)

    def judge(self, answer, reference):
        ok = len(answer) == self.size
        return Judgment(score=float(ok), passed=ok, judge="length")


class _ThirdParty:
    @hookimpl
    def nenyax_register_judges(self):
        return PluginSpec(kind="judge", name="length", factory="nenyax_test_third_party_judge:_LengthJudge")


def test_a_third_party_judge_works_by_name(jsonl, monkeypatch):
    import nenyax.adapters.datasets.plugin as ours

    # Under --import-mode=importlib this module's own name need not be importable; give it one that is.
    monkeypatch.setitem(sys.modules, "nenyax_test_third_party_judge", sys.modules[__name__])
    registry = Registry([("adapters-datasets", ours, None, None), ("acme", _ThirdParty(), None, None)])
    env = load(f"hf:{jsonl}?judge=length&judge.size=2", registry=registry)
    assert env.rollout(lambda q: "<answer>ab</answer>").score == 1.0
    assert env.rollout(lambda q: "<answer>abc</answer>").score == 0.0
