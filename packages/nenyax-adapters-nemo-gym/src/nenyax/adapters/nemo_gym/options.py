"""The ``nemo_gym:`` URI's options: which rows, which server dataset, and how episodes run."""

from __future__ import annotations

from nenyax.adapters.nemo_gym import rows as rowlib
from nenyax.core.toolkit.options import Option, Options

DEFAULT_TIMEOUT = 120.0
TOOL_MAX_TURNS = 10
"""Actions allowed per episode when the rows offer tools (one answer otherwise)."""

OPTIONS = Options(
    "nemo_gym",
    Option("rows", str, help="A JSONL file of dataset rows (required for a running server)."),
    Option("dataset", str, help="Which dataset of a started server (default: example, else the first)."),
    Option("gold_field", str, help="The row field holding the gold answer (default: found by name)."),
    Option("reference", str, default=rowlib.DEFAULT_REFERENCE, help="How the reference policy answers."),
    Option("max_turns", int, minimum=1, help=f"Actions per episode (default: {TOOL_MAX_TURNS} with tools, else 1)."),
    Option("tool_errors", str, default="fail", choices=("fail", "feedback"), help="What a refused tool call does."),
    Option("timeout", float, default=DEFAULT_TIMEOUT, positive=True, help="Seconds one server call may take."),
    prefixes=("config",),
)
"""Query keys of the adapter; ``config.<key>=value`` sets a started server's config."""
