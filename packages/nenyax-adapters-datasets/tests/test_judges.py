import asyncio
import json
import re
import subprocess
import sys
import threading
import time

import pytest

from nenyax.adapters.datasets.deadline import THREAD_NAME
from nenyax.adapters.datasets.judges import ExactJudge, NumericJudge, normalize, parse_number
from nenyax.adapters.datasets.mathjudge import MathJudge
from nenyax.core import Judgment, Registry, Status, UsageError, VerifierFailure, hookimpl, load
from nenyax.core.hookspecs import PluginSpec
from nenyax.core.plugins.judge import JudgeCapabilities


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
        ("50%", 0.5),
        ("50\\%", 0.5),
        ("12.5 %", 0.125),
        ("3/4", 0.75),
        ("-2e-3", -0.002),
        ("\u22122", -2.0),
        ("\u2013 7.5", -7.5),
        ("\\frac{1}{2}", 0.5),
        ("\\frac34", 0.75),
        ("-\\dfrac{3}{4}", -0.75),
        ("3\\tfrac12", 3.5),
        ("1{,}000", 1000.0),
        ("\u00bd", 0.5),
        ("x", None),
        ("50% of 3", None),
        ("1e400", None),
    ],
)
def test_parse_number(text, value):
    assert parse_number(text) == value


@pytest.mark.parametrize(
    ("answer", "gold", "ok"),
    [
        ("50%", "0.5", True),  # a percent is hundredths
        ("50%", "50%", True),
        ("0.5", "50%", True),
        ("50 %", "50\\%", True),
        ("30%", "30", False),  # 30% is 0.3, not 30: never silently right
        ("30", "30%", False),
        ("\u22122", "-2", True),  # a Unicode minus sign
        ("\u22122", "2", False),
        ("\\frac34", "0.75", True),
        ("\\frac34", "3/4", True),
        ("$\\dfrac{3}{4}$", "0.75", True),
        ("\\frac34", "0.7", False),
    ],
)
def test_numeric_reads_percents_minus_signs_and_latex(answer, gold, ok):
    assert NumericJudge().judge(answer, gold).passed is ok


def test_the_numeric_judge_says_which_golds_it_cannot_read():
    judge = NumericJudge()
    assert judge.unreadable_gold("1,000") is None
    assert judge.unreadable_gold("hello") == "a gold answer the numeric judge cannot read as a number ('hello')"
    assert judge.unreadable_gold("\\frac{\\pi}{2}") is None  # LaTeX is read when judged, not at load
    assert judge.judge("1.5708", "\\frac{\\pi}{2}").score == 0.0
    assert NumericJudge(tolerance=1e-4).judge("1.5708", "\\frac{\\pi}{2}").score == 1.0
    words = "\\text{x}"
    with pytest.raises(VerifierFailure, match=re.escape(f"cannot read the gold answer {words!r} as a number")):
        judge.judge("1", words)


def test_exact_reads_a_unicode_minus_as_a_minus():
    assert ExactJudge().judge("\u22122", "-2").passed
    assert not ExactJudge().judge("\u22122", "2").passed


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


# Expanding this polynomial is pure-Python sympy work that runs for many minutes: a verifier that hangs.
HANGS = "(x+1)^{100000}"


def _no_worker_left(within=30.0):
    """Whether every deadline worker stopped within `within` seconds (a stopped worker frees its CPU)."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        if not any(t.name == THREAD_NAME for t in threading.enumerate()):
            return True
        time.sleep(0.05)
    return False


def _in_thread(fn):
    box = {}
    worker = threading.Thread(target=lambda: box.update(result=_capture(fn)))
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "the judge never returned"
    return box["result"]


def _capture(fn):
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - the test asserts on whatever fn raised
        return exc


@pytest.mark.parametrize("where", ["main thread", "worker thread", "event loop"])
def test_a_hanging_verifier_is_a_verifier_failure_wherever_it_runs(where):
    judge = MathJudge(timeout=0.5)

    def judged():
        return judge.judge(HANGS, "\\frac{1}{2}")

    async def in_loop():
        return judged()

    run = {
        "main thread": lambda: _capture(judged),
        "worker thread": lambda: _in_thread(judged),
        "event loop": lambda: _in_thread(lambda: asyncio.run(in_loop())),
    }[where]
    outcome = run()
    assert isinstance(outcome, VerifierFailure), outcome
    assert "math-verify took longer than 0.5 s comparing the answer '(x+1)^{100000}'" in str(outcome)
    assert _no_worker_left(), "the overdue verifier kept running after its deadline"
    # The judge still works afterwards.
    assert judge.judge("\\tfrac12", "0.5").passed


def test_a_hanging_verifier_makes_the_episode_a_verifier_error(tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text(json.dumps({"question": "Half?", "answer": "\\frac{1}{2}"}) + "\n")
    env = load(f"hf:{path}?judge=math&judge.timeout=0.5")
    traj = env.rollout(lambda q: f"<answer>{HANGS}</answer>")
    assert traj.status is Status.VERIFIER_ERROR
    assert traj.judgment is None
    assert traj.score is None
    assert "took longer than 0.5 s" in traj.error

    async def inside_a_running_loop():  # as in Jupyter: the episode runs on a loop in a worker thread
        return env.rollout(lambda q: f"<answer>{HANGS}</answer>")

    assert asyncio.run(inside_a_running_loop()).status is Status.VERIFIER_ERROR
    assert _no_worker_left()


def test_numbers_too_large_to_compute_are_refused_before_sympy_starts():
    # Computing 9^(9^(9^9)) is one C operation holding the GIL: if the size guard broke, no timeout in the
    # process could stop it, so this runs in a child process that is killed after a minute.
    code = (
        "from nenyax.adapters.datasets.mathjudge import MathJudge\n"
        "from nenyax.core import VerifierFailure\n"
        "for answer in ['9^{9^{9^{9}}}', '(10^{10})!', '2^{2^{30}}']:\n"
        "    try:\n"
        "        MathJudge(timeout=30).judge(answer, '3')\n"
        "    except VerifierFailure as exc:\n"
        "        print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    refused = done.stdout.splitlines()
    assert len(refused) == 3, done.stdout + done.stderr
    assert all("digits, too many to compute (the limit is 100,000)" in line for line in refused)
    assert "9**(9**(9**9)) has more than 10^300 digits" in refused[0]
    # A large number that is cheap to compute is compared as usual.
    assert MathJudge().judge("10^{1000}", "10^{1000} + 1").passed is False


def test_a_gold_that_is_no_mathematics_cannot_be_judged():
    with pytest.raises(VerifierFailure, match="cannot read the gold answer"):
        MathJudge().judge("5", "\\")
    assert MathJudge().judge("", "5").passed is False  # no answer is a 0, not a failure


@pytest.mark.parametrize("timeout", [0, -1, float("inf"), "soon", True])
def test_the_math_timeout_must_be_positive_seconds(timeout):
    with pytest.raises(UsageError, match="timeout must be a positive number of seconds"):
        MathJudge(timeout=timeout)


def test_math_judge_through_the_adapter(tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text(json.dumps({"problem": "Half?", "solution": "It is $\\boxed{\\frac{1}{2}}$."}) + "\n")
    env = load(f"hf:{path}?judge=math")
    assert env.session().gold == "\\frac{1}{2}"
    assert env.rollout(lambda q: "<answer>0.5</answer>").score == 1.0
    assert env.rollout(lambda q: "<answer>0.25</answer>").score == 0.0


class _LengthJudge:
    """A third-party judge: passes answers of exactly `size` characters."""

    capabilities = JudgeCapabilities(answer=True)

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
