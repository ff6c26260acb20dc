"""The root README's first-steps claims, run: what a policy function gets and returns, what serve's check needs."""

import re
from pathlib import Path

from nenyax.core import Status, load

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def test_the_serve_section_says_checking_a_served_env_needs_the_openenv_adapter():
    serve = README[README.index("Serve any step environment") : README.index("Servers of other formats")]
    assert "nenyax check openenv:" in serve
    assert "pip install ./packages/nenyax-adapters-openenv`" in serve
    assert "`nenyax-adapters-openenv`" in serve


def test_the_readme_says_what_a_policy_function_gets_and_returns_and_it_is_so():
    text = " ".join(README.split())
    assert "called once per turn with one argument, the environment's native observation" in text
    assert "returns the native action" in text
    assert "ends `policy_error`, scored 0" in text
    env = load("reasoning_gym:basic_arithmetic?size=5&seed=7")
    seen = []

    def my_policy(question):
        seen.append(question)
        return "42"

    judged = env.rollout(my_policy)
    assert judged.status is Status.OK
    assert len(seen) == len(judged.steps) == 1
    assert isinstance(seen[0], str)
    assert re.search(r"\d", seen[0])  # the arithmetic question itself
    # The README's own two lambdas: a str answer is judged, an int is the policy's failure, scored 0.
    assert env.rollout(lambda question: "42").status is Status.OK
    wrong = env.rollout(lambda question: 42)
    assert wrong.status is Status.POLICY_ERROR
    assert wrong.judgment.score == 0.0

    def broken(question):
        raise ValueError("no answer")

    raised = env.rollout(broken)
    assert raised.status is Status.POLICY_ERROR
    assert raised.judgment.score == 0.0
    gym_env = load("gymnasium:CartPole-v1")
    observations = []
    gym_env.rollout(lambda obs: observations.append(obs) or 0, seed=0)
    assert type(observations[0]).__name__ == "ndarray"


def test_the_readmes_python_block_runs_as_written(tmp_path, monkeypatch):
    """The first Python block of the README, executed whole in a fresh folder (the embedded model included)."""
    block = README.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    names: dict = {}
    exec(compile(block, "README.md", "exec"), names)
    written = (tmp_path / "runs" / "t.jsonl").read_text().splitlines()
    assert len(written) == 20 * 4
    assert names["traj"].judgment.passed
