import pytest

from nenyax.providers.local.provider import LocalProvider


@pytest.fixture(scope="session")
def model_folder():
    """The embedded SmolLM2-135M as a transformers folder: the model verl's config names (its tokenizer)."""
    return LocalProvider().weights("smollm2-135m")
