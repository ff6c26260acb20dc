"""One real local Ray instance for the whole suite (starting one takes some 8 s on two busy cores)."""

import os
from pathlib import Path
from types import SimpleNamespace

import pytest
from ray_policies import CONTROL  # this folder: on `pythonpath` here, on PYTHONPATH in Ray's workers

HERE = Path(__file__).parent


@pytest.fixture(scope="session")
def ray_instance(tmp_path_factory):
    """A local Ray instance of 2 CPUs this process started, whose workers import `ray_policies`: its
    policies' control folder and the instance's address (where another driver connects).

    The executors find Ray initialised and use it as it is. With `CI` set, a Ray that cannot start fails.
    """
    import ray

    control = tmp_path_factory.mktemp("control")
    with pytest.MonkeyPatch.context() as patch:
        # Read when Ray starts its processes: the workers inherit both.
        patch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")])))
        patch.setenv(CONTROL, str(control))
        try:
            started = ray.init(
                address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR"
            )
        except Exception as exc:  # noqa: BLE001 - whatever stops Ray from starting is reported the same way
            if os.environ.get("CI"):
                pytest.fail(f"A local Ray instance could not start (CI is set, so this fails): {exc}")
            pytest.skip(f"A local Ray instance could not start: {exc}")
        try:
            yield SimpleNamespace(control=control, address=started.address_info["gcs_address"])
        finally:
            ray.shutdown()


@pytest.fixture
def control(ray_instance):
    """The policies' control folder, emptied for each test."""
    for path in ray_instance.control.iterdir():
        path.unlink()
    return ray_instance.control
