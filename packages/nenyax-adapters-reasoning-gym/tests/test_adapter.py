import re

import pytest

from nenyax.adapters.reasoning_gym.reference import extract_answer
from nenyax.core import BadURIError, Manifest, Status, Tier, UnsupportedPolicyError, Verdict, load
from nenyax.core.contract import serde
from nenyax.core.tiers.measure import check


def test_uri_parameters_reach_the_dataset():
    env = load("reasoning_gym:chain_sum?size=4&seed=7&min_terms=3&max_terms=3&min_digits=1&max_digits=1")
    assert env.task_ids() == [f"chain_sum/7/{i}" for i in range(4)]
    question = env.session(task="chain_sum/7/2").observation
    assert len(re.findall(r"\d+", question.split("=")[0])) == 3
    assert env.manifest.extra["config"] == {
        "chain_sum": {"min_terms": 3, "max_terms": 3, "min_digits": 1, "max_digits": 1}
    }


def test_same_task_same_question_in_another_environment():
    a = load("reasoning_gym:basic_arithmetic?seed=5").session(task="basic_arithmetic/5/3")
    b = load("reasoning_gym:basic_arithmetic?seed=5&size=10").session(task="basic_arithmetic/5/3")
    assert a.observation == b.observation


def test_task_id_at_another_seed_regenerates():
    env = load("reasoning_gym:basic_arithmetic?seed=5")
    other = load("reasoning_gym:basic_arithmetic?seed=6")
    assert (
        env.session(task="basic_arithmetic/6/0").observation == other.session(task="basic_arithmetic/6/0").observation
    )


def test_composite_of_several_datasets():
    env = load("reasoning_gym:leg_counting,chain_sum?size=12&seed=3&chain_sum.weight=3&chain_sum.min_terms=2")
    sources = {env.session(task=t).entry["metadata"]["source_dataset"] for t in env.task_ids()}
    assert sources == {"leg_counting", "chain_sum"}
    assert env.manifest.extra["weights"] == {"leg_counting": 1.0, "chain_sum": 3.0}
    assert all(env.rollout("reference", task=t).score == 1.0 for t in env.task_ids(limit=6))


@pytest.mark.parametrize(
    ("uri", "fragment"),
    [
        ("reasoning_gym:basic_arithmetc", "Did you mean 'basic_arithmetic'"),
        ("reasoning_gym:composite", "Name the datasets to combine"),
        ("reasoning_gym:chain_sum?seed=abc", "seed .* must be an integer"),
        ("reasoning_gym:chain_sum?seed=99999999999999999999999", "seed .* must be an integer from 0 to"),
        ("reasoning_gym:chain_sum?size=0", "size .* must be an integer from 1"),
        ("reasoning_gym:chain_sum,leg_counting?chain_sum.weight=inf", "must be a positive number"),
        ("reasoning_gym:chain_sum?min_term=2", "Did you mean 'min_terms'"),
        ("reasoning_gym:chain_sum?min_terms=5&max_terms=2", "rejected the configuration"),
        ("reasoning_gym:chain_sum,leg_counting?min_terms=2", "prefix each config key"),
        ("reasoning_gym:chain_sum?prompt=nope", "Unknown prompt"),
    ],
)
def test_bad_uris_are_one_sentence(uri, fragment):
    with pytest.raises(BadURIError, match=fragment) as info:
        load(uri)
    assert "\n" not in str(info.value)


def test_foreign_or_out_of_range_task_ids():
    env = load("reasoning_gym:chain_sum?size=3")
    for bad in (
        "leg_counting/42/0",
        "chain_sum/42/3",
        "chain_sum/x/1",
        "chain_sum/42/²",
        "chain_sum/99999999999999999999/0",
    ):
        with pytest.raises(BadURIError):
            env.session(task=bad)


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        ("thinking...\n<answer> 42 </answer>", "42"),
        ("<answer>1</answer> no wait <answer>2</answer>", "2"),
        ("so the result is \\boxed{\\frac{1}{2}}", "\\frac{1}{2}"),
        ("Let me add.\nThe answer is 17.", "17"),
        ("Final answer: cat", "cat"),
        ("5 + 3\n8", ""),  # working without a marked answer is no answer (the shared rules)
        ("  12  ", "12"),
        ("", ""),
    ],
)
def test_answer_extraction(reply, answer):
    assert extract_answer(reply) == answer


def test_model_style_replies_are_scored_on_the_extracted_answer():
    env = load("reasoning_gym:basic_arithmetic")
    session = env.session(task="basic_arithmetic/42/0")
    gold = session.entry["answer"]
    assert env.rollout(lambda q: f"Working it out...\nAnswer: {gold}", task="basic_arithmetic/42/0").score == 1.0
    assert env.rollout(lambda q: f"<answer>{gold}</answer>", task="basic_arithmetic/42/0").judgment.passed


def test_scorer_exception_is_a_verifier_error_not_a_crash():
    env = load("reasoning_gym:prime_factorization")
    traj = env.rollout(lambda q: "xyzzy")
    assert traj.status is Status.VERIFIER_ERROR
    assert traj.judgment is None
    assert traj.steps[0].action == "xyzzy"
    assert "scorer raised" in traj.error


@pytest.mark.parametrize("dataset", ["graph_color", "propositional_logic", "rubiks_cube"])
def test_reference_from_metadata_where_gold_is_none(dataset):
    env = load(f"reasoning_gym:{dataset}?size=5")
    assert env.session().entry["answer"] is None
    assert [env.rollout("reference", task=t).score for t in env.task_ids()] == [1.0] * 5


def test_no_reference_is_declared_and_refused():
    env = load("reasoning_gym:boxnet?size=3")
    assert env.manifest.capabilities.reference_policy is False
    with pytest.raises(UnsupportedPolicyError, match="needs a solver"):
        env.rollout("reference")


def test_generation_output_does_not_leak_to_stdout(capfd):
    env = load("reasoning_gym:bf?size=2")
    env.rollout("null")
    assert capfd.readouterr().out == ""


def test_chat_rendering_asks_for_answer_tags():
    messages = load("reasoning_gym:basic_arithmetic").session().render()
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "<answer>" in messages[0]["content"]


@pytest.mark.parametrize(
    "uri",
    [
        'reasoning_gym:basic_arithmetic?operators=["+","-"]',  # the README's own example
        'reasoning_gym:basic_arithmetic?operators=("+","-")',
        'reasoning_gym:basic_arithmetic,chain_sum?size=20&basic_arithmetic.operators=("+",)',
    ],
)
def test_a_list_valued_config_key_reaches_the_audited_tier(uri):
    report = check(uri, samples=3)
    assert [(r.id, r.evidence) for r in report.results if r.outcome is not Verdict.PASSED] == []
    assert report.tier is Tier.AUDITED


@pytest.mark.parametrize("operators", ['["+","-"]', '("+","-")'])
def test_a_list_valued_config_key_reaches_the_dataset_and_its_manifest(operators):
    env = load(f"reasoning_gym:basic_arithmetic?size=30&operators={operators}")
    assert env.manifest.extra["config"] == {"basic_arithmetic": {"operators": ["+", "-"]}}
    assert serde.loads(serde.dumps(env.manifest), Manifest) == env.manifest
    questions = [env.session(task=task).observation for task in env.task_ids()]
    assert not any(re.search(r"\d\s*[*/]\s*\d", q) for q in questions)
