"""TRL's own tool loop (``environment_factory``) on a step environment with tools: the ors-sdk README's MathEnv,
served by the real ors-sdk server, its episodes played by TRL's real GRPOTrainer (CPU, the embedded SmolLM2).

SmolLM2's own chat template cannot render a tool call, so TRL refuses it for tools: the trainer's tokenizer is
given the ChatML template TRL ships for Qwen2.5 (same special tokens), as a user of this model would. The
135M model never calls a tool by itself (0 of 32 samples), so the GRPO test steers its sampling toward the
README's call with a generation setting of TRL's own (``sequence_bias``); TRL still samples, parses the call,
calls the method and feeds back its answer, and some samples still wander off into a plain reply.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
import torch
from support import SETTINGS, nenyax, trains_two_steps, varied

from nenyax.core import Status, read_trajectories
from nenyax.core.errors import UsageError
from nenyax.trainers.trl import NenyaxSpec
from nenyax_testsupport.serving import python_server

HERE = Path(__file__).parent
CALL = '<tool_call>\n{"name": "submit", "arguments": {"answer": "4"}}\n</tool_call>'


@pytest.fixture(scope="module")
def mathenv():
    """The README's server; its URI, with a plain reply sent to `submit` as the README's client would answer."""
    with python_server(HERE / "ors_readme_env.py") as url:
        yield f"ors:{url}/mathenv"


def _tool_tokenizer(folder: Path):
    import trl
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    tokenizer.chat_template = Path(os.path.dirname(trl.__file__), "chat_templates", "qwen2_5.jinja").read_text()
    return tokenizer


def _steered(tokenizer) -> list[list]:
    """``sequence_bias`` toward the README's call: each token of it, once the ones before it were sampled (the
    deeper into the call, the stronger, so a started call is finished rather than started again). Its first
    token is only nudged: about a third of the samples start with the call, most others call it later or
    never, so a group's scores differ."""
    ids = [*tokenizer(CALL, add_special_tokens=False)["input_ids"], tokenizer.convert_tokens_to_ids("<|im_end|>")]
    return [[ids[: k + 1], 6.0 if k == 0 else 20.0 + 2.0 * k] for k in range(len(ids))]


def test_grpo_trains_through_trls_own_tool_loop_on_the_ors_readme_server(mathenv, model_folder, tmp_path):
    from transformers import AutoModelForCausalLM
    from trl import GRPOConfig, GRPOTrainer

    spec = NenyaxSpec(mathenv + "?terminal_tool=submit", runs=tmp_path / "runs")
    tokenizer = _tool_tokenizer(model_folder)
    # Two episodes a step: the README's call is 29 tokens.
    settings = {**SETTINGS, "per_device_train_batch_size": 2, "num_generations": 2, "max_completion_length": 40}
    trainer = GRPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(model_folder, dtype=torch.float32),
        args=GRPOConfig(
            output_dir=str(tmp_path / "out"),
            max_tool_calling_iterations=1,
            generation_kwargs={"sequence_bias": _steered(tokenizer)},
            **settings,
        ),
        processing_class=tokenizer,
        train_dataset=spec.tool_dataset,
        environment_factory=spec.environment_factory,
        reward_funcs=[*spec.reward_funcs, varied],
    )
    trains_two_steps(trainer)

    recorded = list(read_trajectories(spec.run_dir / "trajectories.jsonl"))
    assert len(recorded) == 2 * 2  # every episode TRL played, recorded
    assert {t.policy.name for t in recorded} == {"trl:environment_factory"}
    called = [t for t in recorded if t.tool_calls and t.steps[0].action == {"name": "submit", "input": {"answer": "4"}}]
    assert called, "TRL's loop never called the environment's tool"
    for trajectory in called:  # the call TRL parsed reached the server, which judged it
        assert trajectory.status is Status.OK
        assert trajectory.judgment.score == 1.0
        assert trajectory.tool_calls[0].result["blocks"][0]["text"] == "Correct!"
    # Each step's logged reward is the mean of the scores the server gave that step's episodes.
    logged = [e["rewards/nenyax_score/mean"] for e in trainer.state.log_history if "rewards/nenyax_score/mean" in e]
    by_batch: dict[str, list[float]] = {}
    for t in recorded:
        assert t.status in (Status.OK, Status.POLICY_ERROR)
        by_batch.setdefault(t.group_id.split(":")[0], []).append(t.judgment.score)
    assert logged == pytest.approx([sum(s) / len(s) for _, s in sorted(by_batch.items())])
    tool_calls = [e["tools/call_frequency"] for e in trainer.state.log_history if "tools/call_frequency" in e]
    assert tool_calls
    assert all(frequency > 0 for frequency in tool_calls)
    counted = [e for e in trainer.state.log_history if "nenyax/status/ok" in e]
    assert counted
    assert counted[0]["nenyax/untrainable"] == 0.0
    page = json.loads(nenyax("view", str(spec.run_dir), "--json"))["page"]
    assert os.path.getsize(page) > 0


def test_a_reply_without_a_tool_call_is_played_as_nenyax_plays_it(mathenv, tmp_path):
    # TRL never hands the environment the model's last reply: the reward function does. With a terminal tool
    # the reply is its answer; without one it is the policy's error (0), as in Nenyax's own loop.
    from nenyax.trainers.trl.spec import nenyax_score

    for uri, want in ((mathenv + "?terminal_tool=submit", (1.0, "ok")), (mathenv, (0.0, "policy_error"))):
        spec = NenyaxSpec(uri, runs=tmp_path / "runs")
        env = spec.environment_factory()
        assert env.reset(task_id="test/0") == "What is 2+2?"
        logged: dict[str, float] = {}
        scores = nenyax_score(
            environments=[env],
            completions=[[{"role": "assistant", "content": " 4 "}]],
            log_metric=logged.__setitem__,
        )
        assert scores == [want[0]]
        (trajectory,) = read_trajectories(spec.run_dir / "trajectories.jsonl")
        assert trajectory.status.value == want[1]
        assert logged[f"nenyax/status/{want[1]}"] == 1.0


def test_the_tools_are_the_servers_and_a_finished_episode_takes_no_more_calls(mathenv, tmp_path):
    from transformers.utils import get_json_schema

    spec = NenyaxSpec(mathenv, runs=tmp_path / "runs")
    env = spec.environment_factory()
    schema = get_json_schema(env.submit)["function"]  # what TRL renders into the chat template
    assert schema["name"] == "submit"
    assert schema["parameters"]["properties"]["answer"]["type"] == "string"
    assert schema["parameters"]["required"] == ["answer"]
    env.reset(task_id="test/0")
    assert asyncio.run(env.submit(answer="5")) == "Incorrect"
    with pytest.raises(RuntimeError, match=r"The episode is over \(ok\)"):
        asyncio.run(env.submit(answer="4"))  # TRL shows the model this error as the tool's answer
    (score,) = spec.score_episodes([env], [[{"role": "assistant", "content": "done"}]], None)
    assert score == 0.0


def test_an_environment_trls_tool_loop_cannot_play_is_one_sentence(mathenv, tmp_path):
    for uri, said in (
        ("verifiers:nenyax.adapters.verifiers.demo:load_environment", "runs its own loop"),
        ("reasoning_gym:basic_arithmetic?size=4", "offers the model no tools"),
    ):
        spec = NenyaxSpec(uri, runs=tmp_path / "runs")
        with pytest.raises(UsageError, match=said) as refused:
            spec.environment_factory  # noqa: B018 - the property is what refuses
        assert str(refused.value).count(". ") == 0
    env = NenyaxSpec(mathenv, runs=tmp_path / "runs").environment_factory()
    with pytest.raises(UsageError, match="no task_id"):
        env.reset(prompt=[{"role": "user", "content": "hi"}])
