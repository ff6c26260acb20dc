"""Every torch learner passes the learner conformance kit (`nenyax learner-check NAME` runs the same checks).

Each trains, saves and restores a randomly initialised tiny Llama of SmolLM2's vocabulary (`tiny_llama`,
saved with SmolLM2's tokenizer as a model folder the local provider serves), so the kit's real updates
take a fraction of a second on a CPU.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import pytest

from nenyax.testing import Subject, conformance_suite


@pytest.fixture(scope="session")
def tiny_folder(tmp_path_factory, tokenizer, make_tiny) -> Path:  # type: ignore[no-untyped-def]
    folder = tmp_path_factory.mktemp("tiny") / "model"
    make_tiny(len(tokenizer)).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


class TorchConformance(conformance_suite("learner")):
    options: ClassVar = {"device": "cpu", "seed": 0, "max_tokens": 8}

    @pytest.fixture
    def subject(self, tiny_folder: Path) -> Subject:
        """The installed learner, on the tiny model."""
        options = {**self.options, "model": f"local:{tiny_folder}"}
        return Subject.from_environment(kind="learner", name=self.plugin, options=options)


class TestGRPO(TorchConformance):
    plugin = "grpo"


class TestDAPO(TorchConformance):
    plugin = "dapo"


class TestGSPO(TorchConformance):
    plugin = "gspo"


class TestRLOO(TorchConformance):
    plugin = "rloo"


class TestRFT(TorchConformance):
    plugin = "rft"


class TestDPO(TorchConformance):
    plugin = "dpo"
