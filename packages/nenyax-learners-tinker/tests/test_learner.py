"""The learner against a fake of the tinker SDK's client surface (no Tinker service is reachable here).

`tinker_fake_sdk` has the real clients' method names, signatures, futures and result types, and checks
every Datum as the service would take it; the trajectories trained on are the embedded model's, recorded
by the real engine (conftest.py).
"""

import os
import subprocess
import sys
import time

import pytest
import tinker
from support import scored
from tinker_fake_sdk import BASE_MODEL

from nenyax.core.errors import InfraFailure, UsageError
from nenyax.core.plugins.learner import Learner
from nenyax.core.plugins.registry import default_registry
from nenyax.learners.tinker.datums import LOSSES, batch
from nenyax.learners.tinker.learner import TinkerLearner


def make(**options):
    return default_registry().create("learner", "tinker", model=BASE_MODEL, **options)


def test_missing_key_is_one_sentence_naming_the_variable_before_any_client(fake_service, monkeypatch):
    """The fake counts every ServiceClient made: none is, the key is checked first."""
    monkeypatch.delenv("TINKER_API_KEY")
    with pytest.raises(UsageError) as info:
        make()
    assert str(info.value) == (
        "The tinker learner reads its API key from the environment variable TINKER_API_KEY, which is not set; "
        "set it (or name another variable with api_key_env)."
    )
    monkeypatch.setenv("MY_TINKER", "tml-other")
    with pytest.raises(UsageError, match="environment variable OTHER_KEY,"):
        make(api_key_env="OTHER_KEY")
    assert fake_service.made == []
    learner = make(api_key_env="MY_TINKER")
    assert [c.api_key for c in fake_service.made] == ["tml-other"]
    learner.close()


def test_nenyax_train_without_the_key_says_so_and_exits_2(tmp_path):
    """The real CLI and the real SDK: nothing is faked, and nothing is sent before the key is found missing."""
    env = {k: v for k, v in os.environ.items() if k != "TINKER_API_KEY"}
    command = ["train", "reasoning_gym:basic_arithmetic", "--learner", "tinker", "--model", f"tinker:{BASE_MODEL}"]
    done = subprocess.run(
        [sys.executable, "-m", "nenyax.cli", *command, "--out", str(tmp_path / "run")],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "environment variable TINKER_API_KEY, which is not set" in done.stderr
    assert "Traceback" not in done.stderr


def test_constructing_with_the_real_sdk_sends_nothing(monkeypatch):
    """The real `tinker.ServiceClient` (no fake): pointed at a closed port, construction still returns at once,
    since no request is made before the first use."""
    monkeypatch.setenv("TINKER_API_KEY", "tml-test-key")
    started = time.perf_counter()
    learner = TinkerLearner(f"tinker:{BASE_MODEL}", base_url="http://127.0.0.1:9")
    assert time.perf_counter() - started < 5
    assert type(learner.service) is tinker.ServiceClient
    assert learner.base_model == BASE_MODEL  # the provider prefix is accepted and dropped
    learner.close()


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"loss": "grpo"}, "The tinker learner's loss must be one of .*, got 'grpo'. Did you mean 'gspo'"),
        ({"rank": 0}, "The tinker learner's rank must be a positive integer, got 0."),
        ({"lr": -1}, "lr must be a positive number, got -1."),
        ({"scale": "batch"}, "scale must be one of group, none, got 'batch'."),
    ],
)
def test_bad_options_are_one_sentence(fake_service, options, fragment):
    with pytest.raises(UsageError, match=fragment.replace("?", r"\?")) as info:
        make(**options)
    assert "\n" not in str(info.value)


def test_no_model_is_one_sentence(fake_service):
    with pytest.raises(UsageError, match="needs the base model"):
        default_registry().create("learner", "tinker", model=None)


@pytest.mark.parametrize("loss", LOSSES)
def test_update_sends_the_datums_with_the_loss_then_one_adam_step(fake_service, endpoint_groups, loss):
    groups = [scored(endpoint_groups[0], [1.0, 0.0, 0.0]), scored(endpoint_groups[1], [0.0, 0.0, 1.0])]
    learner = make(loss=loss, rank=8, lr=4e-5, loss_config={"clip_low_threshold": 0.8})
    assert isinstance(learner, Learner)
    metrics = learner.update(groups)

    [service] = fake_service.made
    [training] = service.training_clients
    assert training.base_model == BASE_MODEL
    assert training.lora["rank"] == 8
    [(data, sent_loss, config)] = training.forward_backward_calls
    assert sent_loss == loss
    assert config == {"clip_low_threshold": 0.8}
    expected = batch(groups, loss=loss).data
    assert [d.model_input.to_ints() for d in data] == [d.model_input.to_ints() for d in expected]
    assert [d.loss_fn_inputs["advantages"].to_numpy().tolist() for d in data] == [
        d.loss_fn_inputs["advantages"].to_numpy().tolist() for d in expected
    ]
    [adam] = training.optim_calls
    assert adam == tinker.AdamParams(learning_rate=4e-5, beta1=0.9, beta2=0.95, eps=1e-12)
    assert metrics["datums"] == 6
    assert metrics["step"] == 1
    assert metrics["idle_calls"] == 0
    assert metrics["tokens"] == sum(len(t.model_calls[0].completion_token_ids) for g in groups for t in g.trajectories)
    assert metrics["loss"] == metrics["service/loss:sum"]
    assert learner.policy().info.revision == "step-1"
    learner.close()
    assert service.closed == "success"


def test_each_update_samples_the_new_weights(fake_service, endpoint_groups):
    learner = make()
    before = learner.policy()
    learner.update([scored(endpoint_groups[0], [1.0, 0.0, 0.0])])
    after = learner.policy()
    assert before.info.revision == "step-0"
    assert after.info.revision == "step-1"
    assert before.sampler.weights != after.sampler.weights
    assert learner.policy().sampler is after.sampler  # one snapshot per revision, not one per policy()
    assert learner.eval_policy().params["temperature"] == 0.0


def test_groups_without_signal_change_nothing(fake_service, endpoint_groups):
    learner = make()
    metrics = learner.update([scored(endpoint_groups[0], [0.5, 0.5, 0.5])])
    assert metrics == {"datums": 0.0, "tokens": 0.0, "idle_calls": 3.0, "step": 0.0}
    assert fake_service.made[0].training_clients == []  # nothing was sent, not even a client made


def test_a_service_failure_is_an_infrastructure_failure(fake_service, endpoint_groups):
    learner = make()
    fake_service.fail_next["forward_backward"] = ConnectionError("the service went away")
    with pytest.raises(
        InfraFailure,
        match=r"failed to run forward_backward \(importance_sampling\) \(ConnectionError: the service went away\)",
    ):
        learner.update([scored(endpoint_groups[0], [1.0, 0.0, 0.0])])
    assert learner.step == 0


def test_checkpoint_folder_and_revision(fake_service, endpoint_groups, tmp_path):
    learner = make()
    learner.update([scored(endpoint_groups[0], [1.0, 0.0, 0.0])])
    folder = tmp_path / "checkpoints" / "round-001"
    folder.mkdir(parents=True)
    revision = learner.save(folder)
    assert revision == str(folder)
    state = (folder / "tinker.json").read_text()
    [saved] = fake_service.made[0].training_clients[0].saved
    assert f'"path": "{saved}"' in state
    assert '"step": 1' in state
    assert "/weights/nenyax-round-001-" in saved


def test_restore_of_a_folder_without_a_checkpoint_is_one_sentence(fake_service, tmp_path):
    with pytest.raises(UsageError, match=f"Cannot restore the tinker learner from {tmp_path}") as info:
        make().restore(str(tmp_path))
    assert "\n" not in str(info.value)


def test_restore_refuses_another_base_model(fake_service, tmp_path):
    (tmp_path / "tinker.json").write_text('{"path": "tinker://x/weights/y", "step": 3, "base_model": "Qwen/Qwen3-8B"}')
    with pytest.raises(UsageError, match="is of 'Qwen/Qwen3-8B', not of this learner's"):
        make().restore(str(tmp_path))


def test_the_key_never_lands_in_the_checkpoint(fake_service, endpoint_groups, tmp_path):
    learner = make()
    learner.save(tmp_path)
    assert os.environ["TINKER_API_KEY"] not in (tmp_path / "tinker.json").read_text()
