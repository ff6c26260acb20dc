"""The fake stands for the SDK only if it keeps to the SDK's surface: same method names and parameters
(names, kinds, defaults) as the installed tinker's clients, and the SDK's own future type."""

import inspect

import pytest
import tinker
import tinker_fake_sdk as fake
from tinker.lib.public_interfaces.api_future import APIFuture

SURFACE = [
    (tinker.ServiceClient, fake.FakeServiceClient, "__init__"),
    (tinker.ServiceClient, fake.FakeServiceClient, "create_lora_training_client"),
    (tinker.ServiceClient, fake.FakeServiceClient, "create_training_client_from_state_with_optimizer"),
    (tinker.ServiceClient, fake.FakeServiceClient, "close"),
    (tinker.TrainingClient, fake.FakeTrainingClient, "forward_backward"),
    (tinker.TrainingClient, fake.FakeTrainingClient, "optim_step"),
    (tinker.TrainingClient, fake.FakeTrainingClient, "save_state"),
    (tinker.TrainingClient, fake.FakeTrainingClient, "save_weights_and_get_sampling_client"),
    (tinker.TrainingClient, fake.FakeTrainingClient, "get_tokenizer"),
    (tinker.SamplingClient, fake.FakeSamplingClient, "sample"),
    (tinker.SamplingClient, fake.FakeSamplingClient, "get_tokenizer"),
]


def _shape(fn):
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


@pytest.mark.parametrize(("real", "double", "method"), SURFACE, ids=[f"{r.__name__}.{m}" for r, _, m in SURFACE])
def test_the_fake_has_the_sdks_signatures(real, double, method):
    assert _shape(getattr(double, method)) == _shape(getattr(real, method))


def test_the_fake_returns_the_sdks_futures(fake_service):
    client = fake.FakeServiceClient().create_lora_training_client(fake.BASE_MODEL)
    assert isinstance(client, APIFuture)
    training = client.result()
    saved = training.save_state("x").result()
    assert isinstance(saved, tinker.types.SaveWeightsResponse)
    assert saved.path.startswith("tinker://")


def test_the_fake_refuses_a_datum_the_service_could_not_take(fake_service):
    training = fake.FakeServiceClient().create_lora_training_client(fake.BASE_MODEL).result()
    short = tinker.Datum(
        model_input=tinker.ModelInput.from_ints([1, 2, 3]),
        loss_fn_inputs={"target_tokens": [2, 3], "logprobs": [0.0, -1.0], "advantages": [0.0, 1.0]},
    )
    with pytest.raises(AssertionError, match="target_tokens"):
        training.forward_backward([short], "importance_sampling")
    with pytest.raises(ValueError, match="unknown loss_fn 'grpo'"):
        training.forward_backward([short], "grpo").result()
