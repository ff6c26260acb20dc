"""The tinker learner passes the learner conformance kit, against the fake tinker SDK (`tinker_fake_sdk`).

The kit's real updates, saves and restores (in the same instance and in a new one) go to the fake
service, whose checkpoint store lives in the test's folder; no Tinker service is reachable here.
"""

from __future__ import annotations

from typing import ClassVar

import pytest
from tinker_fake_sdk import BASE_MODEL

from nenyax.testing import Subject, conformance_suite


class TestTinker(conformance_suite("learner")):
    plugin = "tinker"
    options: ClassVar = {"model": BASE_MODEL}

    @pytest.fixture
    def subject(self, fake_service) -> Subject:
        """The installed learner, its SDK the fake service."""
        return Subject.from_environment(kind="learner", name=self.plugin, options=self.options)
