"""Where CI's time goes: stamp a nox log's lines, then sum each session's phases.

    CI=true bash .ci/run 2>&1 | python3 .ci/phases.py stamp > ci.log
    python3 .ci/phases.py table ci.log      # | session | venv | install | tests | other | total |

Not part of CI itself (`.ci/run` runs the README's test command only); the table in tests/README.md
was made with it.
"""

from __future__ import annotations

import re
import sys
import time


def stamp() -> None:
    """Copy stdin to stdout, each line prefixed with the seconds since the start."""
    start = time.monotonic()
    for line in sys.stdin:
        sys.stdout.write(f"{time.monotonic() - start:8.1f} {line}")
        sys.stdout.flush()


def _kind(command: str) -> str | None:
    if command.startswith("Creating virtual"):
        return "venv"
    if re.search(r"\bpip (install|wheel)\b|-m venv\b", command):
        return "install"
    if re.search(r"(^|/)pytest\b", command):
        return "tests"
    if command.startswith(("cd ", "Re-using", "Skipping")):
        return None
    return "other"


def table(path: str) -> None:
    """Print each session's seconds by phase (a phase lasts until nox's next command)."""
    rows: list[dict[str, float | str]] = []
    current: dict[str, float | str] | None = None
    since, phase = 0.0, None
    with open(path, encoding="utf-8", errors="replace") as log:
        lines = log.readlines()
    for line in lines:
        found = re.match(r"\s*([\d.]+) nox > (.*)", line)
        if not found:
            continue
        at, command = float(found[1]), found[2]
        if current is not None and phase is not None:
            current[phase] = float(current.get(phase, 0.0)) + at - since
        phase = None
        if command.startswith("Running session "):
            current = {"name": command.removeprefix("Running session "), "start": at}
            rows.append(current)
        elif current is not None and re.match(r"Session .* (was successful|failed|was skipped)", command):
            current["end"] = at
        elif current is not None:
            phase, since = _kind(command), at
    columns = ("venv", "install", "tests", "other")
    print("| session | " + " | ".join(columns) + " | total |")
    print("| --- |" + " ---: |" * (len(columns) + 1))
    totals = dict.fromkeys((*columns, "total"), 0.0)
    for row in rows:
        values = {c: float(row.get(c, 0.0)) for c in columns}
        values["total"] = float(row.get("end", row["start"])) - float(row["start"])
        for name, value in values.items():
            totals[name] += value
        print(f"| {row['name']} | " + " | ".join(f"{values[c]:.0f}" for c in (*columns, "total")) + " |")
    print("| all | " + " | ".join(f"{totals[c]:.0f}" for c in (*columns, "total")) + " |")


if __name__ == "__main__":
    if sys.argv[1:2] == ["stamp"]:
        stamp()
    elif sys.argv[1:2] == ["table"] and len(sys.argv) == 3:
        table(sys.argv[2])
    else:
        sys.exit(__doc__)
