"""save/restore round trips, in this process and in a fresh one, against the fake tinker SDK (no Tinker
service is reachable here): its checkpoints live in a folder standing for the service's storage, so a
new process reads them back as it would from the service."""

import json
import os
import subprocess
import sys
from pathlib import Path

from test_datums import scored
from tinker_fake_sdk import BASE_MODEL

from nenyax.core.plugins.registry import default_registry

CHILD = """
import json, sys
import tinker, tinker_fake_sdk
from nenyax.core.plugins.registry import default_registry
tinker.ServiceClient = tinker_fake_sdk.FakeServiceClient
learner = default_registry().create("learner", "tinker", model=tinker_fake_sdk.BASE_MODEL)
learner.restore(sys.argv[1])
training = learner.training
policy = learner.policy()
print(json.dumps({"step": learner.step, "weights": training.weights, "adam": training.adam_state,
                  "loaded_from": training.loaded_from, "revision": policy.info.revision,
                  "sampled_weights": policy.sampler.weights}))
"""


def test_restore_returns_to_the_saved_weights_and_optimizer_here_and_in_a_new_process(
    fake_service, endpoint_groups, tmp_path
):
    learner = default_registry().create("learner", "tinker", model=BASE_MODEL)
    learner.update([scored(endpoint_groups[0], [1.0, 0.0, 0.0])])
    kept = tmp_path / "checkpoints" / "round-001"
    kept.mkdir(parents=True)
    revision = learner.save(kept)
    saved = learner.training
    at_save = {"weights": saved.weights, "adam": saved.adam_state, "path": saved.saved[-1]}

    learner.update([scored(endpoint_groups[1], [0.0, 0.0, 1.0])])  # the round that gets reverted
    assert learner.step == 2
    assert learner.training.weights != at_save["weights"]

    learner.restore(revision)
    here = learner.training
    assert here is not saved
    assert here.loaded_from == at_save["path"]
    assert (here.weights, here.adam_state) == (at_save["weights"], at_save["adam"])
    assert learner.step == 1
    policy = learner.policy()
    assert policy.info.revision == "step-1"
    assert policy.sampler.weights == at_save["weights"]
    learner.close()

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), *sys.path])}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, revision], capture_output=True, text=True, env=env, timeout=240, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    there = json.loads(done.stdout.strip().splitlines()[-1])
    assert there == {
        "step": 1,
        "weights": at_save["weights"],
        "adam": at_save["adam"],
        "loaded_from": at_save["path"],
        "revision": "step-1",
        "sampled_weights": at_save["weights"],
    }
