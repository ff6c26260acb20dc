import os

import pytest
import torch

from nenyax.providers.local.provider import LocalProvider

if os.environ.get("PYTEST_XDIST_WORKER"):
    # Two workers on two cores: one thread each, rather than four threads fighting over two cores.
    torch.set_num_threads(1)


@pytest.fixture(scope="session")
def model_folder():
    """The embedded SmolLM2-135M as a transformers folder: the trainer's model."""
    return LocalProvider().weights("smollm2-135m")
