"""The conformance checks of `sandbox` plugins beyond the common ones (`nenyax.testing.checks.common`).

Every check starts real sandboxes from the backend's `default_image` and runs real commands in them;
the containment checks (files outside the sandbox, the network, a fork bomb, a memory hog) run for
the capabilities the backend claims, each beside a control that shows the probe itself works (a
connection the same probe makes when it is allowed, a file it can write where it may). Probes use
only ``sh`` and, for the network, ``bash``'s ``/dev/tcp``: both are in any Debian-based image.

Each yields one sentence per problem found.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

from nenyax.core.errors import InfraFailure
from nenyax.core.plugins.sandbox import ExecResult, Sandbox, SandboxHandle, SandboxSpec
from nenyax.testing.report import Check
from nenyax.testing.subject import Subject

WORKDIR = "/workspace"


def _sandbox(subject: Subject) -> Sandbox:
    backend: Sandbox = subject.instance()
    return backend


def _spec(subject: Subject, **fields: Any) -> SandboxSpec:
    return SandboxSpec(image=_sandbox(subject).default_image, workdir=WORKDIR, **fields)


@contextlib.asynccontextmanager
async def _box(subject: Subject, proxy: str | None = None, **fields: Any) -> AsyncIterator[SandboxHandle]:
    backend = _sandbox(subject)
    image = await backend.build(_spec(subject, **fields))
    async with await backend.start(image, proxy=proxy) as box:
        yield box


def _run(scenario: Callable[[], Coroutine[Any, Any, list[str]]]) -> Iterator[str]:
    """Run one async scenario to its end; the sentences it collected are the findings."""
    yield from asyncio.run(scenario())


def _said(result: ExecResult) -> str:
    out = (result.stdout + result.stderr).strip().replace("\n", " | ")
    return f"exit {result.exit_code}{' (timed out)' if result.timed_out else ''}: {out[:200]!r}"


def runs_commands(subject: Subject) -> Iterator[str]:
    """exec runs argv lists and shell strings in the workdir with the spec's and the call's env; a
    non-zero exit is data; stdout and stderr are kept apart."""

    async def scenario() -> list[str]:
        problems = []
        async with _box(subject, env={"NENYAX_FROM_SPEC": "spec"}) as box:
            done = await box.exec(
                "echo out; echo err >&2; pwd; echo $NENYAX_FROM_SPEC $NENYAX_FROM_CALL; exit 3",
                env={"NENYAX_FROM_CALL": "call"},
            )
            lines = done.stdout.split()
            if done.exit_code != 3 or done.ok:
                problems.append(f"`exit 3` ended {_said(done)}; its exit code must be 3 and the result not ok.")
            if lines[:4] != ["out", WORKDIR, "spec", "call"]:
                problems.append(f"stdout was {done.stdout!r}; expected out, {WORKDIR}, then 'spec call'.")
            if done.stderr.strip() != "err":
                problems.append(f"stderr was {done.stderr!r}; expected 'err' alone.")
            argv = await box.exec(["sh", "-c", 'echo "$0"', "two words"], cwd="/")
            if argv.stdout.strip() != "two words":
                problems.append(f"An argv list was not passed as it is: {_said(argv)}.")
            where = await box.exec("pwd", cwd="/tmp")
            if where.stdout.strip() != "/tmp":
                problems.append(f"cwd='/tmp' ran in {where.stdout.strip()!r}.")
        return problems

    yield from _run(scenario)


def _count(marker: str) -> str:
    # Processes whose command line holds `marker`, read from /proc (no ps in a minimal image). The
    # pattern brackets its last character, so the counting shell's own command line does not match it.
    pattern = f"{marker[:-1]}[{marker[-1]}]"
    return (
        "n=0; for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f 2>/dev/null | grep -q -- "
        f"'{pattern}' && n=$((n+1)); done; echo $n"
    )


def _reap_host_processes(marker: str) -> int:
    """How many processes on this machine run `marker`; each is killed (a failed check leaves no litter)."""
    found = 0
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        with contextlib.suppress(OSError):
            if cmdline.read_bytes().replace(b"\0", b" ").strip() == marker.encode():
                found += 1
                os.kill(int(cmdline.parent.name), signal.SIGKILL)
    return found


def timeout_kills_the_tree(subject: Subject) -> Iterator[str]:
    """A command past its timeout is killed with everything it started, its own session leaders too,
    and the result says ``timed_out``."""

    async def scenario() -> list[str]:
        problems = []
        seconds = 700 + int(uuid.uuid4().int % 200)  # an odd sleep no other process runs
        marker = f"sleep {seconds}"
        try:
            async with _box(subject) as box:
                started = time.monotonic()
                script = f"{marker} & (setsid {marker} &) ; nohup {marker} >/dev/null 2>&1 & {marker}"
                try:
                    done = await asyncio.wait_for(box.exec(script, timeout=1.5), 30)
                except TimeoutError:
                    return ["A command past its 1.5 s timeout had not returned 30 s later (its children hold it?)."]
                took = time.monotonic() - started
                if not done.timed_out or done.ok:
                    problems.append(f"A command past its 1.5 s timeout ended {_said(done)}, not timed out.")
                if took > 15:
                    problems.append(f"A command past its 1.5 s timeout took {took:.0f} s to return.")
                await asyncio.sleep(0.5)
                left = await box.exec(_count(marker))
                if left.stdout.strip() != "0":
                    problems.append(f"{left.stdout.strip()} of the timed-out command's processes outlived it inside.")
        finally:
            if escaped := _reap_host_processes(marker):
                problems.append(f"{escaped} of the timed-out command's processes outlived the sandbox.")
        return problems

    yield from _run(scenario)


def output_is_bounded(subject: Subject) -> Iterator[str]:
    """A command printing megabytes keeps only `max_output` bytes of each stream, and says it was cut."""

    async def scenario() -> list[str]:
        problems = []
        async with _box(subject) as box:
            done = await box.exec("head -c 3000000 /dev/zero | tr '\\0' x; echo; echo END", max_output=64 << 10)
            if not done.truncated:
                problems.append("3 MB of output with max_output=64 KiB did not say truncated.")
            if len(done.stdout.encode()) > (64 << 10) + 200:
                problems.append(f"3 MB of output with max_output=64 KiB kept {len(done.stdout.encode())} bytes.")
            if not done.stdout.rstrip().endswith("END"):
                problems.append("A cut output lost its last line (keep the tail: that is where a failure shows).")
            small = await box.exec("echo small")
            if small.truncated or small.stdout != "small\n":
                problems.append(f"A short output came back as {small.stdout!r} (truncated={small.truncated}).")
        return problems

    yield from _run(scenario)


def files_go_in_and_out(subject: Subject) -> Iterator[str]:
    """put and get copy files and whole folders both ways, byte for byte."""

    async def scenario() -> list[str]:
        problems = []
        with tempfile.TemporaryDirectory(prefix="nenyax-kit-") as scratch:
            here = Path(scratch)
            (here / "tree" / "deep").mkdir(parents=True)
            (here / "tree" / "deep" / "a.bin").write_bytes(bytes(range(256)) * 40)
            (here / "tree" / "b.txt").write_text("b\n")
            (here / "one.txt").write_text("one\n")
            async with _box(subject) as box:
                await box.put(here / "tree", f"{WORKDIR}/tree")
                await box.put(here / "one.txt", "/tmp/in/one.txt")
                seen = await box.exec(f"cat {WORKDIR}/tree/b.txt /tmp/in/one.txt; wc -c < {WORKDIR}/tree/deep/a.bin")
                if seen.stdout.split() != ["b", "one", "10240"]:
                    problems.append(f"Files put in read back as {seen.stdout!r}.")
                await box.exec("mkdir -p out/sub && echo made > out/sub/c.txt && cp tree/deep/a.bin out/")
                await box.get(f"{WORKDIR}/out", here / "back")
                await box.get(f"{WORKDIR}/out/sub/c.txt", here / "c.txt")
                if not (here / "back" / "sub" / "c.txt").is_file() or (here / "c.txt").read_text() != "made\n":
                    problems.append("get did not bring a folder and a file back where asked.")
                elif (here / "back" / "a.bin").read_bytes() != (here / "tree" / "deep" / "a.bin").read_bytes():
                    problems.append("A binary file came back changed.")
                try:
                    await box.get("/nenyax-no-such-file", here / "none")
                except InfraFailure:
                    pass
                else:
                    problems.append("get of a path that does not exist raised no InfraFailure.")
        return problems

    yield from _run(scenario)


def images_have_stable_digests(subject: Subject) -> Iterator[str]:
    """The same spec builds to the same digest, and `remove` and `close` may be called twice."""

    async def scenario() -> list[str]:
        problems = []
        backend = _sandbox(subject)
        first, again = await backend.build(_spec(subject)), await backend.build(_spec(subject))
        if first.digest != again.digest or not first.digest.startswith("sha256:"):
            problems.append(f"One spec built to digests {first.digest!r} and {again.digest!r}.")
        async with await backend.start(first) as box:
            await box.stop()
        await box.stop()  # twice is fine
        await backend.remove(first)
        await backend.remove(first)
        return problems

    yield from _run(scenario)


def unenforced_limits_are_said(subject: Subject) -> Iterator[str]:
    """A limit the backend does not claim to enforce is listed in the handle's ``unenforced``."""

    async def scenario() -> list[str]:
        problems = []
        caps = _sandbox(subject).capabilities
        asked: dict[str, Any] = {"memory_mb": 512, "pids": 256, "storage_mb": 1024}
        async with _box(subject, **asked) as box:
            for name in asked:
                claimed = caps.storage_limit if name == "storage_mb" else caps.resource_limits
                if not claimed and name not in box.unenforced:
                    problems.append(f"{name} is asked for, not claimed, and missing from the handle's unenforced.")
                if claimed and name in box.unenforced:
                    problems.append(f"{name} is claimed, yet the handle lists it as unenforced.")
        return problems

    yield from _run(scenario)


def sessions_persist(subject: Subject) -> Iterator[str]:
    """Files and a background process started by one exec are still there at the next."""

    async def scenario() -> list[str]:
        problems = []
        marker = f"sleep {900 + int(uuid.uuid4().int % 90)}"
        async with _box(subject) as box:
            await box.exec(f"echo kept > kept.txt; nohup {marker} >/dev/null 2>&1 &", timeout=10)
            seen = await box.exec(f"cat kept.txt; {_count(marker)}")
            if seen.stdout.split() != ["kept", "1"]:
                problems.append(f"The next exec saw {seen.stdout!r}: the file and one background process.")
        return problems

    yield from _run(scenario)


def host_files_are_safe(subject: Subject) -> Iterator[str]:
    """Nothing outside the sandbox's own files can be written from inside: not the host's /usr or /etc
    (not even after a remount), not the folder the checks run from."""

    async def scenario() -> list[str]:
        problems = []
        name = f"nenyax-kit-{uuid.uuid4().hex[:8]}"
        outside = Path.cwd() / name
        targets = [f"/usr/{name}", f"/etc/{name}", str(outside), f"/root/{name}"]
        async with _box(subject) as box:
            control = await box.exec(f"echo x > {WORKDIR}/{name} && cat {WORKDIR}/{name}")
            if control.stdout.strip() != "x":
                problems.append(f"Writing in the workdir failed ({_said(control)}); the probe cannot tell anything.")
            tries = " ; ".join(f"echo x > {t} 2>/dev/null" for t in targets)
            await box.exec(f"mount -o remount,rw /usr 2>/dev/null; mount -o remount,rw / 2>/dev/null; {tries}")
        for target in targets:
            if Path(target).exists():
                problems.append(f"A command inside the sandbox wrote {target} on this machine.")
                with contextlib.suppress(OSError):
                    Path(target).unlink()
        return problems

    yield from _run(scenario)


async def _listener(reply: bytes) -> tuple[asyncio.Server, int]:
    """A TCP server on this machine's loopback answering every connection with `reply`."""

    async def answer(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(reply)
        with contextlib.suppress(OSError):
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


def _connect(host: str, port: int) -> str:
    # bash's /dev/tcp: connect, print what the peer says; `timeout` so a dropped packet cannot hang it.
    return f"timeout 5 bash -c 'exec 3<>/dev/tcp/{host}/{port} && cat <&3' 2>/dev/null || echo UNREACHABLE"


def network_is_cut(subject: Subject) -> Iterator[str]:
    """With ``network="none"`` a server on this machine's loopback cannot be reached, and no interface
    but loopback is up; the same probe reaches it where the network is the host's."""

    async def scenario() -> list[str]:
        problems = []
        server, port = await _listener(b"NENYAX-HOST\n")
        async with server:
            async with _box(subject) as box:
                cut = await box.exec(_connect("127.0.0.1", port))
                links = await box.exec("cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' ' | sort | tr '\\n' ' '")
            if "NENYAX-HOST" in cut.stdout:
                problems.append("A sandbox with network='none' reached a server on this machine's loopback.")
            if links.stdout.split() not in (["lo"], []):
                problems.append(f"A sandbox with network='none' has interfaces {links.stdout.split()}.")
            with contextlib.suppress(InfraFailure):
                async with _box(subject, network="full") as box:
                    control = await box.exec(_connect("127.0.0.1", port))
                if "NENYAX-HOST" not in control.stdout:
                    problems.append(
                        f"With network='full' the probe did not connect ({_said(control)}): it proves nothing."
                    )
        return problems

    yield from _run(scenario)


def proxy_only_is_the_proxy(subject: Subject) -> Iterator[str]:
    """With ``network="proxy"`` the proxy given to `start` answers at the handle's `proxy_url`, and
    another server on this machine's loopback does not."""

    async def scenario() -> list[str]:
        problems = []
        proxy, proxy_port = await _listener(b"HTTP/1.0 200 OK\r\n\r\nNENYAX-PROXY\n")
        other, other_port = await _listener(b"NENYAX-OTHER\n")
        async with proxy, other:
            async with _box(subject, proxy=f"http://127.0.0.1:{proxy_port}/v1", network="proxy") as box:
                url = box.proxy_url or ""
                host_port = url.split("://", 1)[-1].split("/", 1)[0]
                host, _, port = host_port.rpartition(":")
                if not port.isdigit():
                    return [f"The handle's proxy_url is {url!r}, not an http://HOST:PORT/... URL."]
                reached = await box.exec(_connect(host, int(port)))
                stray = await box.exec(_connect("127.0.0.1", other_port))
            if "NENYAX-PROXY" not in reached.stdout:
                problems.append(f"With network='proxy' the proxy did not answer at {url} ({_said(reached)}).")
            if "NENYAX-OTHER" in stray.stdout:
                problems.append("With network='proxy' another server on this machine's loopback was reached.")
        return problems

    yield from _run(scenario)


def limits_hold(subject: Subject) -> Iterator[str]:
    """memory_mb kills a memory hog, pids bounds a fork bomb (200 processes against 32), and the
    sandbox answers afterwards; the same commands run unbounded without the limits."""

    async def scenario() -> list[str]:
        problems = []
        hog = "head -c 400000000 /dev/zero | tail -n 1 >/dev/null && echo SURVIVED"
        bomb = "for i in $(seq 200); do sleep 30 >/dev/null 2>&1 & done 2>/dev/null; sleep 1; " + _count("sleep 30")
        async with _box(subject, memory_mb=64, pids=32) as box:
            ate = await box.exec(hog, timeout=60)
            forked = await box.exec(bomb, timeout=60)
            # Within 20 s, before the bomb's sleeps end on their own: what a command leaves must not hold the table.
            after = await box.exec("echo alive", timeout=20)
        if "SURVIVED" in ate.stdout and ate.exit_code == 0:
            problems.append("A command holding 400 MB ran to its end under memory_mb=64.")
        count = forked.stdout.split()[-1] if forked.stdout.split() else ""
        if count.isdigit() and int(count) > 32:
            problems.append(f"{count} processes ran at once under pids=32.")
        if after.stdout.strip() != "alive":
            problems.append(f"After the memory hog and the fork bomb the sandbox answered {_said(after)}.")
        async with _box(subject) as box:
            control = await box.exec(hog, timeout=60)
        if "SURVIVED" not in control.stdout:
            problems.append(f"Without limits the memory probe failed too ({_said(control)}): it proves nothing.")
        return problems

    yield from _run(scenario)


def runs_as_other_users(subject: Subject) -> Iterator[str]:
    """exec's ``user`` runs the command as that user (by name and by uid)."""

    async def scenario() -> list[str]:
        async with _box(subject) as box:
            named = await box.exec("id -u", user="nobody")
            numbered = await box.exec("id -u", user=1234)
            root = await box.exec("id -u", user="root")
        seen = [r.stdout.strip() for r in (named, numbered, root)]
        return [] if seen == ["65534", "1234", "0"] else [f"user='nobody', 1234, 'root' ran as uids {seen}."]

    yield from _run(scenario)


def output_streams(subject: Subject) -> Iterator[str]:
    """``on_output`` hears each line while the command still runs."""

    async def scenario() -> list[str]:
        heard: list[tuple[str, str, float]] = []
        async with _box(subject) as box:
            started = time.monotonic()
            done = await box.exec(
                "echo first; sleep 2; echo second >&2",
                on_output=lambda stream, line: heard.append((stream, line.rstrip("\n"), time.monotonic() - started)),
            )
        took = time.monotonic() - started
        lines = [(stream, line) for stream, line, _ in heard]
        if lines != [("stdout", "first"), ("stderr", "second")]:
            return [f"on_output heard {lines}."]
        if heard[0][2] > took - 1:
            return ["The first line reached on_output only when the command ended."]
        return [] if done.stdout == "first\n" else [f"A streamed command's result kept {done.stdout!r}."]

    yield from _run(scenario)


def builds_dockerfiles(subject: Subject) -> Iterator[str]:
    """A Dockerfile context builds (FROM the default image, ARG, ENV, WORKDIR, COPY, RUN), and a changed
    build argument gives another digest."""

    async def scenario() -> list[str]:
        problems = []
        backend = _sandbox(subject)
        with tempfile.TemporaryDirectory(prefix="nenyax-kit-") as scratch:
            context = Path(scratch)
            (context / "hello.txt").write_text("hello\n")
            (context / "Dockerfile").write_text(
                f"FROM {backend.default_image}\nARG GREETING=hi\nENV NENYAX_GREETING=$GREETING\n"
                "WORKDIR /srv/app\nCOPY hello.txt /srv/app/hello.txt\nRUN echo built > /srv/app/built.txt\n"
            )
            spec = SandboxSpec(context=context, workdir="/srv/app", build_args={"GREETING": "hey"})
            image = await backend.build(spec)
            other = await backend.build(SandboxSpec(context=context, workdir="/srv/app", build_args={"GREETING": "yo"}))
            try:
                async with await backend.start(image) as box:
                    done = await box.exec("cat hello.txt built.txt; echo $NENYAX_GREETING")
            finally:
                for built in (image, other):
                    await backend.remove(built)
        if done.stdout.split() != ["hello", "built", "hey"]:
            problems.append(f"The built image gave {done.stdout!r}; expected hello, built, hey.")
        if image.digest == other.digest:
            problems.append("Two builds with different build arguments have one digest.")
        return problems

    yield from _run(scenario)


def closes(subject: Subject) -> Iterator[str]:
    """close stops the handles still open, and may be called twice."""

    async def scenario() -> list[str]:
        backend = _sandbox(subject)
        image = await backend.build(_spec(subject))
        box = await backend.start(image)
        await backend.close()
        await backend.close()
        try:
            done = await box.exec("echo still-here", timeout=10)
        except InfraFailure:
            return []
        return [] if "still-here" not in done.stdout else ["A handle still ran commands after the backend closed."]

    yield from _run(scenario)


SANDBOX_CHECKS: tuple[Check, ...] = (
    Check(id="sandbox/runs-commands", summary="runs argv and shell commands; exits are data", run=runs_commands),
    Check(id="sandbox/timeout-kills-the-tree", summary="a timeout kills all it started", run=timeout_kills_the_tree),
    Check(id="sandbox/output-is-bounded", summary="output is bounded and says when cut", run=output_is_bounded),
    Check(id="sandbox/files-go-in-and-out", summary="put and get copy files and folders", run=files_go_in_and_out),
    Check(
        id="sandbox/images-have-stable-digests", summary="stable digests; remove twice", run=images_have_stable_digests
    ),
    Check(
        id="sandbox/unenforced-limits-are-said",
        summary="limits it cannot enforce are said",
        run=unenforced_limits_are_said,
    ),
    Check(
        id="sandbox/sessions-persist",
        summary="files and processes survive between execs",
        run=sessions_persist,
        requires=("persistent_session",),
    ),
    Check(
        id="sandbox/host-files-are-safe",
        summary="nothing outside can be written from inside",
        run=host_files_are_safe,
        requires=("filesystem_isolation",),
    ),
    Check(
        id="sandbox/network-is-cut",
        summary="network='none' reaches nothing",
        run=network_is_cut,
        requires=("network_isolation",),
    ),
    Check(
        id="sandbox/proxy-only-is-the-proxy",
        summary="network='proxy' reaches the proxy alone",
        run=proxy_only_is_the_proxy,
        requires=("proxy_network",),
    ),
    Check(
        id="sandbox/limits-hold",
        summary="a memory hog and a fork bomb are bounded",
        run=limits_hold,
        requires=("resource_limits",),
    ),
    Check(
        id="sandbox/runs-as-other-users",
        summary="exec runs as the user asked",
        run=runs_as_other_users,
        requires=("exec_users",),
    ),
    Check(
        id="sandbox/output-streams",
        summary="output lines arrive as printed",
        run=output_streams,
        requires=("streaming_output",),
    ),
    Check(
        id="sandbox/builds-dockerfiles",
        summary="Dockerfile contexts build",
        run=builds_dockerfiles,
        requires=("image_build",),
    ),
    Check(id="sandbox/closes", summary="close stops what is open", run=closes),
)
"""The sandbox kind's own checks, in the order they run (after `common_checks("sandbox")`)."""
