"""The exporter conformance kit: each of its checks catches an exporter that breaks what it checks.

The exporters under test are small flawed ones defined here (fakes: a flaw no real exporter ships
with), beside core's real ``jsonl`` exporter, which passes every check; the parquet and hf exporters
pass the same kit in their own distributions' suites.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from nenyax.core.builtin_plugins.jsonl_exporter import JsonlExporter, JsonlWriter
from nenyax.core.hookspecs import PluginSpec, hookimpl
from nenyax.core.plugins.registry import Registry
from nenyax.testing import CHECKS, Subject, Verdict, run_check


class NoSuffix(JsonlExporter):
    suffix = "jsonl"


class InPlaceWriter:
    """Writes straight to the destination: a killed export leaves a partial file a reader takes as whole."""

    def __init__(self, destination, schema):
        self.path = Path(destination)
        self.file = self.path.open("w")

    def write_batch(self, rows):
        self.file.write("".join(f"{dict(r)}\n" for r in rows))

    def close(self):
        self.file.close()
        return str(self.path)

    def abort(self):
        self.file.close()


class InPlace(JsonlExporter):
    def open(self, destination, *, schema):
        return InPlaceWriter(destination, schema)


class WrongPath(JsonlExporter):
    def open(self, destination, *, schema):
        writer = JsonlWriter(destination, schema)
        close = writer.close
        writer.close = lambda: close() + ".elsewhere"
        return writer


# Factories are import strings; pytest names this module after its path, which may not be importable
# (``packages.nenyax-core...`` when run from the repository root), so it is reachable under a plain name too.
MODULE = "nenyax_exporter_kit_flawed"
sys.modules[MODULE] = sys.modules[__name__]


class Plugin:
    @hookimpl
    def nenyax_register_exporters(self):
        return [
            PluginSpec(kind="exporter", name=name, factory=f"{MODULE}:{attr}")
            for name, attr in (("nosuffix", "NoSuffix"), ("inplace", "InPlace"), ("wrongpath", "WrongPath"))
        ] + [
            PluginSpec(
                kind="exporter", name="jsonl", factory="nenyax.core.builtin_plugins.jsonl_exporter:JsonlExporter"
            )
        ]


def outcome(check_id, name):
    subject = Subject.from_registry("exporter", name, Registry.from_plugins(("fakes", Plugin())))
    check = next(c for c in CHECKS["exporter"] if c.id == check_id)
    return run_check(check, subject)


@pytest.mark.parametrize(
    "check_id", ["exporter/has-a-suffix", "exporter/writes-every-shape", "exporter/appears-whole-at-close"]
)
def test_core_s_jsonl_exporter_passes(check_id):
    found = outcome(check_id, "jsonl")
    assert found.verdict is Verdict.PASSED, (found.reason, found.findings)


@pytest.mark.parametrize(
    ("check_id", "name", "says"),
    [
        ("exporter/has-a-suffix", "nosuffix", "Its suffix is 'jsonl'"),
        ("exporter/writes-every-shape", "wrongpath", ".elsewhere"),
        ("exporter/appears-whole-at-close", "inplace", "existed before close()"),
    ],
)
def test_each_check_catches_the_flaw_it_is_for(check_id, name, says):
    found = outcome(check_id, name)
    assert found.verdict is Verdict.FAILED, found.reason
    assert any(says in f.message for f in found.findings), [f.message for f in found.findings]
