"""The bwrap backend's own behaviour, beyond the kit: real bwrap, real cgroups (CI runs as root)."""

import asyncio
import os
import subprocess
import sys

import pytest

from nenyax.core import InfraFailure, Mount, NetworkPolicy, SandboxSpec, create_sandbox

AS_ROOT = os.geteuid() == 0


def run(coro):
    return asyncio.run(coro)


def test_it_claims_what_root_makes_possible():
    caps = create_sandbox("bwrap").capabilities
    assert caps.network_isolation
    assert caps.filesystem_isolation
    assert caps.proxy_network is AS_ROOT
    assert caps.exec_users is AS_ROOT
    assert not caps.image_build


def test_a_dockerfile_context_is_refused_in_one_sentence(tmp_path):
    (tmp_path / "Dockerfile").write_text("FROM debian:12\n")
    with pytest.raises(InfraFailure, match=r"builds no Dockerfile .*use a sandbox that builds images") as caught:
        run(create_sandbox("bwrap").build(SandboxSpec(context=tmp_path)))
    assert "\n" not in str(caught.value)


def test_an_image_other_than_the_host_is_refused():
    with pytest.raises(InfraFailure, match=r"image='host'\), not 'debian:12'"):
        run(create_sandbox("bwrap").build(SandboxSpec(image="debian:12")))


def test_limits_it_holds_are_not_listed_unenforced_and_the_rest_are():
    async def scenario():
        backend = create_sandbox("bwrap")
        image = await backend.build(SandboxSpec(image="host", memory_mb=128, storage_mb=64, gpus=1))
        async with await backend.start(image) as box:
            return box.unenforced

    unenforced = run(scenario())
    assert "storage_mb" in unenforced
    assert "gpus" in unenforced
    assert ("memory_mb" in unenforced) is not AS_ROOT


def test_the_host_home_project_and_password_hashes_are_hidden():
    async def scenario():
        backend = create_sandbox("bwrap")
        async with await backend.start(await backend.build(SandboxSpec(image="host"))) as box:
            return await box.exec(f"ls /root /home {os.getcwd()} 2>&1; cat /etc/shadow | wc -c; cat /etc/hostname")

    done = run(scenario())
    assert "No such file or directory" in done.stdout
    assert done.stdout.split("\n")[-3].strip() == "0"  # /etc/shadow is /dev/null inside


def test_a_workdir_and_mounts_are_where_the_spec_says(tmp_path):
    (tmp_path / "shared.txt").write_text("from the host\n")

    async def scenario():
        backend = create_sandbox("bwrap")
        spec = SandboxSpec(image="host", workdir="/app", mounts=[Mount(source=tmp_path, target="/data")])
        async with await backend.start(await backend.build(spec)) as box:
            read = await box.exec("pwd; cat /data/shared.txt")
            write = await box.exec("echo x > /data/new.txt")
            return read, write

    read, write = run(scenario())
    assert read.stdout == "/app\nfrom the host\n"
    assert write.exit_code != 0
    assert not (tmp_path / "new.txt").exists()


def test_a_stopped_sandbox_leaves_no_process_and_no_files():
    async def scenario():
        backend = create_sandbox("bwrap")
        box = await backend.start(await backend.build(SandboxSpec(image="host")))
        await box.exec("nohup sleep 777 >/dev/null 2>&1 &")
        scratch = box._box
        await box.stop()
        return scratch

    scratch = run(scenario())
    left = subprocess.run(["pgrep", "-f", "sleep 777"], capture_output=True, text=True, check=False)
    assert left.stdout == ""
    assert not scratch.exists()


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_a_command_is_over_at_its_exit_though_what_it_left_running_holds_its_pipes(loop):
    """tmux's server, which harbor starts, held an exec's stdout: under uvloop (uvicorn's loop) every trial hung."""
    import time

    async def scenario():
        backend = create_sandbox("bwrap")
        box = await backend.start(await backend.build(SandboxSpec(image="host")))
        try:
            started = time.monotonic()
            done = await box.exec("echo before; sleep 60 & echo after", timeout=30)
            return done, time.monotonic() - started
        finally:
            await box.stop()

    if loop == "uvloop":
        import uvloop  # uvicorn's own loop where installed (NeMo Gym's agent servers)

        done, took = uvloop.run(scenario())
    else:
        done, took = run(scenario())
    assert done.exit_code == 0
    assert not done.timed_out
    assert done.stdout.split() == ["before", "after"]
    assert took < 10  # not the background sleep's 60 s, nor the 30 s timeout


def test_network_full_shares_the_hosts_network():
    async def scenario():
        backend = create_sandbox("bwrap")
        spec = SandboxSpec(image="host", network=NetworkPolicy.FULL)
        async with await backend.start(await backend.build(spec)) as box:
            return await box.exec("cat /proc/net/dev | tail -n +3 | wc -l")

    assert int(run(scenario()).stdout) > 1


def test_the_cli_runs_the_kit_and_exits_zero():
    done = subprocess.run(
        [sys.executable, "-m", "nenyax.cli", "sandbox-check", "bwrap"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    outcomes = dict(line.split()[:2] for line in done.stdout.splitlines() if line.startswith("sandbox/"))
    assert outcomes["sandbox/limits-hold"] == "passed"
    assert outcomes["sandbox/proxy-only-is-the-proxy"] == "passed"
    assert outcomes["sandbox/builds-dockerfiles"] == "skipped"
