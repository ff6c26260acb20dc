"""What a task's Dockerfile sets up, replayed in a sandbox that builds no images (bwrap).

A Dockerfile both picks an image (``FROM``) and sets it up: ``COPY``/``ADD`` of the build context's files
(harbor's separate verifier puts its tests in this way: ``COPY . /tests/``), ``RUN`` commands, ``ENV``
and ``WORKDIR``. A sandbox without a builder cannot give the image, but it can do the set-up: the files
are put in, the commands run inside, in the Dockerfile's order. What cannot be replayed (a multi-stage
build, ``COPY --from`` another image, a URL, a heredoc) is a sentence in `Plan.problem`, so the episode
fails as the infrastructure it is, never as a score.
"""

from __future__ import annotations

import glob
import json
import re
import shlex
from pathlib import Path, PurePosixPath

import attrs

_IGNORED = frozenset(
    {"CMD", "ENTRYPOINT", "EXPOSE", "LABEL", "MAINTAINER", "HEALTHCHECK", "VOLUME", "STOPSIGNAL", "SHELL", "USER"}
)
"""Instructions that change no file of the image (USER and SHELL change how later commands run: noted)."""

_VARIABLE = re.compile(r"\$(?:\{(\w+)(?::?-([^}]*))?\}|(\w+))")


@attrs.frozen
class Copy:
    """Put `sources` (files or folders of the build context) at `target` inside the sandbox."""

    sources: tuple[Path, ...]
    target: str
    line: int


@attrs.frozen
class Run:
    """Run `command` with ``/bin/sh -c`` in `workdir`, with `env` set (the Dockerfile's ENV and ARG so far)."""

    command: str
    workdir: str
    env: dict[str, str]
    line: int


@attrs.frozen
class Plan:
    """The set-up of one Dockerfile, in order, or why it cannot be replayed."""

    base: str | None
    steps: tuple[Copy | Run, ...]
    env: dict[str, str]
    workdir: str | None
    problem: str | None = None
    notes: tuple[str, ...] = ()


def _instructions(text: str) -> list[tuple[int, str, str]]:
    """(line number, INSTRUCTION, arguments) with continuations joined and comments dropped."""
    found: list[tuple[int, str, str]] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if pending and line.lstrip().startswith("#"):
            continue
        if not pending:
            start = number
        if line.endswith("\\"):
            pending.append(line[:-1])
            continue
        pending.append(line)
        joined = " ".join(part.strip() for part in pending)
        pending = []
        word, _, rest = joined.partition(" ")
        found.append((start, word.upper(), rest.strip()))
    return found


def _expand(text: str, values: dict[str, str]) -> str:
    def one(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(3)
        default = match.group(2)
        return values.get(name, default if default is not None else "")

    return _VARIABLE.sub(one, text)


def _words(args: str) -> list[str]:
    """An instruction's arguments: the JSON-array form, else shell-like words."""
    if args.startswith("["):
        try:
            parsed = json.loads(args)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            return [str(word) for word in parsed]
    return shlex.split(args)


def _pairs(args: str) -> dict[str, str]:
    """``ENV``/``ARG`` arguments: ``k=v k2="v 2"``, or the legacy ``k v``."""
    words = shlex.split(args)
    if words and "=" not in words[0]:
        return {words[0]: " ".join(words[1:])} if len(words) > 1 else {words[0]: ""}
    pairs = (word.partition("=") for word in words)
    return {key: value for key, _, value in pairs}


def _absolute(path: str, workdir: str | None) -> str:
    posix = PurePosixPath(path)
    return str(posix if posix.is_absolute() else PurePosixPath(workdir or "/") / posix)


def plan(context: Path, dockerfile: Path) -> Plan:
    """The set-up `dockerfile` does with the build context `context`, as steps a sandbox can replay."""
    steps: list[Copy | Run] = []
    env: dict[str, str] = {}
    args: dict[str, str] = {}
    workdir: str | None = None
    base: str | None = None
    notes: list[str] = []

    def refused(why: str) -> Plan:
        return Plan(base=base, steps=tuple(steps), env=env, workdir=workdir, problem=why, notes=tuple(notes))

    for line, word, rest in _instructions(dockerfile.read_text(errors="replace")):
        where = f"{dockerfile.name} line {line}"
        values = {**args, **env}
        if word == "FROM":
            if base is not None:
                return refused(f"{where} starts a second build stage (a multi-stage build)")
            base = _expand(rest.split()[0], args) if rest else ""
        elif word == "ARG":
            args.update({k: _expand(v, values) for k, v in _pairs(rest).items()})
        elif word == "ENV":
            env.update({k: _expand(v, values) for k, v in _pairs(rest).items()})
        elif word == "WORKDIR":
            workdir = _absolute(_expand(rest.strip().strip("\"'"), values), workdir)
        elif word == "RUN":
            if "<<" in rest:
                return refused(f"{where} RUNs a heredoc")
            if rest.startswith("--"):
                return refused(f"{where} RUNs with BuildKit flags ({rest.split()[0]})")
            command = shlex.join(_words(rest)) if rest.startswith("[") else rest
            steps.append(Run(command=command, workdir=workdir or "/", env=dict(values), line=line))
        elif word in ("COPY", "ADD"):
            words = _words(_expand(rest, values))
            flags = [w for w in words if w.startswith("--")]
            if any(flag.startswith("--from") for flag in flags):
                return refused(f"{where} copies from another image ({' '.join(flags)})")
            paths = [w for w in words if not w.startswith("--")]
            if len(paths) < 2:
                return refused(f"{where} names no destination")
            *sources, target = paths
            if word == "ADD" and any(re.match(r"^\w+://", s) or s.endswith((".tar", ".gz", ".tgz")) for s in sources):
                return refused(f"{where} ADDs a URL or an archive")
            found: list[Path] = []
            for source in sources:
                matched = sorted(glob.glob(str(context / source)))
                if not matched:
                    return refused(f"{where} copies {source}, which the build context {context} does not hold")
                found += [Path(m) for m in matched]
            many = len(found) > 1 or found[0].is_dir()
            target = _absolute(target, workdir) + ("/" if target.endswith("/") or many else "")
            steps.append(Copy(sources=tuple(found), target=target, line=line))
        elif word in _IGNORED:
            if word in ("USER", "SHELL"):
                notes.append(f"{where}: {word} {rest} was not applied (commands ran as root with /bin/sh)")
        else:
            return refused(f"{where} has an instruction the replay does not know ({word})")
    return Plan(base=base, steps=tuple(steps), env=env, workdir=workdir, notes=tuple(notes))
