"""The `acme` sandbox's own promises: what the conformance kit cannot know it should do."""

import asyncio

from nenyax.core import SandboxSpec

from nenyax_acme.sandbox import AcmeSandbox


def test_files_outlive_a_command_and_background_processes_do_not():
    async def scenario():
        backend = AcmeSandbox()
        image = await backend.build(SandboxSpec(image="host", workdir="/workspace"))
        async with await backend.start(image) as box:
            await box.exec("echo kept > kept.txt; sleep 600 &")
            # Every command line, one a line; the brackets keep the pattern from matching its own command.
            count = "for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f; echo; done | grep -c 'sleep 60[0]'"
            return await box.exec(f"cat kept.txt; {count}")

    done = asyncio.run(scenario())
    assert done.stdout.split() == ["kept", "0"]
