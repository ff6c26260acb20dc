"""The torch learners on the embedded SmolLM2-135M: real episodes, real updates, served weights, checkpoints."""

from __future__ import annotations

import asyncio
import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import attrs
import pytest
import torch

from nenyax.core import UsageError, load
from nenyax.core.contract.chat import TextRequest
from nenyax.core.contract.trajectory import Group, Judgment
from nenyax.core.plugins.registry import default_registry

LEARNER = {"max_tokens": 16, "micro_batch": 4, "lr": 1e-5, "device": "cpu", "seed": 3}
ENV = "reasoning_gym:basic_arithmetic"


def served_logprobs(policy, ids: list[int]) -> list[float]:  # type: ignore[no-untyped-def]
    """The logprob the served policy gives each token of `ids` after the first (a prompt scored, nothing generated)."""
    call = asyncio.run(
        policy.complete_text(TextRequest(model="", prompt=tuple(ids), params={"max_tokens": 0}, echo=True))
    )
    return [float(t["logprob"]) for t in call.prompt_logprobs[1:]]


def ranked(groups: list[Group]) -> list[Group]:
    """The groups with each member's score replaced by its rank in the group (1, 0, 0, ...), so every group
    carries a learning signal: the base model scores 0 on nearly every task, and a group scored alike
    trains nothing. (The environment's own scores are used by `test_update_on_the_environments_scores`.)"""
    out = []
    for group in groups:
        members = tuple(
            attrs.evolve(t, judgment=Judgment(score=1.0 if i == 0 else 0.0, judge="rank"))
            for i, t in enumerate(group.trajectories)
        )
        out.append(attrs.evolve(group, trajectories=members))
    return out


@pytest.fixture(scope="module")
def env():  # type: ignore[no-untyped-def]
    return load(ENV)


@pytest.fixture(scope="module")
def learner():  # type: ignore[no-untyped-def]
    made = default_registry().create("learner", "grpo", **LEARNER)
    yield made
    made.close()


@pytest.fixture(scope="module")
def probe(learner, env) -> list[int]:  # type: ignore[no-untyped-def]
    """Fixed token ids: a held-out task's prompt and the base model's greedy reply to it."""
    trajectory = env.rollout(learner.eval_policy(), task=env.task_ids()[-1])
    call = trajectory.model_calls[0]
    return [*call.prompt_token_ids, *call.completion_token_ids]


def test_the_six_learners_are_registered_and_discovery_imports_no_torch():
    for name in ("grpo", "dapo", "rloo", "gspo", "rft", "dpo"):
        assert default_registry().get("learner", name).distribution == "nenyax-learners-torch"
    code = (
        "import sys; from nenyax.core.plugins.registry import Registry; Registry().names('learner'); "
        "print(sorted(m for m in ('torch', 'transformers', 'nenyax.learners.torch.learner') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize(
    ("name", "options", "message"),
    [
        ("grpo", {"lr": "fast"}, r"The torch learner's lr must be a number of at least 0, got 'fast'\."),
        ("grpo", {"loss_type": "ppo"}, r"loss_type must be one of grpo, dr_grpo, dapo, bnpo, got 'ppo'\."),
        ("gspo", {"importance_sampling_level": "word"}, r"must be one of token, sequence, got 'word'"),
        ("rloo", {"beta": 0.1}, r"The rloo learner takes no KL penalty"),
        ("dapo", {"device": "tpu"}, r"device must be auto, cpu, cuda, cuda:N or mps, not 'tpu'\."),
        ("dpo", {"micro_batch": 0}, r"micro_batch must be an integer of at least 1, got 0\."),
        ("rft", {"model": "openai:gpt-4.1-mini"}, r"cannot hand a model's weights to a learner"),
        ("grpo", {"model": "smollm2"}, r"Name the learner's model as '<provider>:<model>'"),
    ],
)
def test_a_bad_option_is_refused_in_one_sentence(name, options, message):
    with pytest.raises(UsageError, match=message):
        default_registry().create("learner", name, **options)


def test_an_update_trains_on_real_episodes_and_the_policy_serves_the_new_weights(learner, env, probe):
    before_policy = learner.policy()
    before = served_logprobs(before_policy, probe)
    weights_before = learner.model.model.layers[0].mlp.up_proj.weight.detach().clone()
    groups = env.groups(before_policy, env.task_ids()[:2], n=2)
    assert all(t.model_calls and t.model_calls[0].completion_token_ids for g in groups for t in g.trajectories)
    metrics = learner.update(ranked(groups))
    assert metrics["skipped"] == 0.0
    assert math.isfinite(metrics["loss"])
    assert metrics["grad_norm"] > 0
    assert metrics["tokens"] == sum(len(t.model_calls[0].completion_token_ids) for g in groups for t in g.trajectories)
    assert metrics["tokens_per_s"] > 0
    assert not torch.equal(weights_before, learner.model.model.layers[0].mlp.up_proj.weight)
    after_policy = learner.policy()
    assert after_policy.info.revision != before_policy.info.revision
    assert after_policy.model != before_policy.model  # a new folder: the provider loads it afresh
    after = served_logprobs(after_policy, probe)
    assert len(after) == len(before)
    assert max(abs(a - b) for a, b in zip(after, before, strict=True)) > 1e-4
    # The served weights are the trained ones: the learner's own forward gives the same logprobs.
    with torch.no_grad():
        logits = learner.model(input_ids=torch.tensor([probe])).logits[0, :-1]
    own = logits.log_softmax(-1).gather(-1, torch.tensor(probe[1:]).unsqueeze(-1)).squeeze(-1).tolist()
    assert max(abs(a - b) for a, b in zip(after, own, strict=True)) < 1e-3


def test_update_on_the_environments_scores(learner, env):
    """With the environment's own judgments: an update runs when a group's scores differ, and is skipped
    (weights untouched) when every member scored alike."""
    groups = env.groups(learner.policy(), env.task_ids()[2:4], n=2)
    flat = [
        attrs.evolve(g, trajectories=tuple(attrs.evolve(t, judgment=Judgment(score=0.0)) for t in g.trajectories))
        for g in groups
    ]
    revision = learner.policy().info.revision
    skipped = learner.update(flat)
    assert skipped["skipped"] == 1.0
    assert learner.policy().info.revision == revision
    if any(len(set(g.scores)) > 1 for g in groups):
        assert learner.update(groups)["skipped"] == 0.0


def test_a_harmful_update_is_undone_by_restore_exactly(learner, env, probe, tmp_path):
    revision = learner.save(tmp_path / "round-0001")
    good = served_logprobs(learner.policy(), probe)
    groups = ranked(env.groups(learner.policy(), env.task_ids()[4:5], n=2))
    learner.optimizer.param_groups[0]["lr"] = 1.0  # deliberately harmful
    learner.update(groups)
    learner.optimizer.param_groups[0]["lr"] = LEARNER["lr"]
    harmed = served_logprobs(learner.policy(), probe)
    assert sum(harmed) < sum(good) - 10  # held-out reply far less likely
    learner.restore(revision)
    assert served_logprobs(learner.policy(), probe) == pytest.approx(good, abs=1e-6)
    assert learner.optimizer.param_groups[0]["lr"] == LEARNER["lr"]


def test_a_revision_is_restored_in_a_fresh_process(learner, probe, tmp_path):
    revision = learner.save(tmp_path / "round-0002")
    assert Path(revision, "model", "model.safetensors").is_file()
    mine = served_logprobs(learner.policy(), probe)
    moments = sum(float(s["exp_avg"].abs().sum()) for s in learner.optimizer.state.values())
    code = textwrap.dedent(
        f"""
        import asyncio, json
        from nenyax.core.contract.chat import TextRequest
        from nenyax.core.plugins.registry import default_registry
        learner = default_registry().create("learner", "grpo", **{LEARNER!r})
        learner.restore({revision!r})
        call = asyncio.run(learner.policy().complete_text(
            TextRequest(model="", prompt=tuple({probe!r}), params={{"max_tokens": 0}}, echo=True)))
        moments = sum(float(s["exp_avg"].abs().sum()) for s in learner.optimizer.state.values())
        print(json.dumps({{"step": learner.step, "moments": moments,
                           "logprobs": [t["logprob"] for t in call.prompt_logprobs[1:]]}}))
        learner.close()
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    theirs = json.loads(done.stdout.strip().splitlines()[-1])
    assert theirs["step"] == learner.step > 0
    assert theirs["moments"] == pytest.approx(moments, rel=1e-6)
    assert theirs["logprobs"] == pytest.approx(mine, abs=1e-5)


def test_restore_refuses_what_is_not_a_checkpoint(learner, tmp_path):
    with pytest.raises(UsageError, match="is not a torch learner checkpoint"):
        learner.restore(str(tmp_path))


@pytest.mark.parametrize("name", ["dapo", "gspo", "rloo", "rft", "dpo"])
def test_each_other_learner_makes_a_finite_update_that_moves_the_weights(name, learner, env):
    """The same real episodes (played by the grpo learner's policy, scored by rank) train every other preset.

    DPO's pair is sampled: two greedy replies are the same tokens, and DPO's loss on equal replies has no
    gradient (its chosen and rejected terms cancel). The others keep the greedy pair: GSPO's tight sequence
    clip zeroes every term of a sampled pair whose recorded logprobs came at another temperature."""
    policy = learner.policy() if name == "dpo" else learner.eval_policy()
    groups = ranked(env.groups(policy, env.task_ids()[5:6], n=2))
    if name == "dpo":
        [first, second] = groups[0].trajectories
        assert first.model_calls[0].completion_token_ids != second.model_calls[0].completion_token_ids
    other = default_registry().create("learner", name, **LEARNER)
    try:
        before = other.model.model.layers[0].self_attn.q_proj.weight.detach().clone()
        metrics = other.update(groups)
        assert metrics["skipped"] == 0.0
        assert math.isfinite(metrics["loss"])
        assert metrics["grad_norm"] > 0
        assert not torch.equal(before, other.model.model.layers[0].self_attn.q_proj.weight)
    finally:
        other.close()
