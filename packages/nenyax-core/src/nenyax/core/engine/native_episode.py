"""What a rollout- or task-mode environment's own loop is handed, and what it hands back.

Kept apart from `native_loop` (which runs the episode on the recording proxy, an HTTP server) so that an
adapter importing these types loads no server: the proxy loads when an episode runs.
"""

from __future__ import annotations

from typing import Any

import attrs

from nenyax.core.contract.trajectory import Judgment, Status, Step


@attrs.frozen(kw_only=True)
class NativeEpisode:
    """What a rollout- or task-mode environment's own loop is handed for one episode."""

    task_id: str | None
    seed: int | None
    sample: int
    """Repeat number of this task in a run."""
    base_url: str
    """An OpenAI-compatible base URL (``.../v1``) on Nenyax's recording proxy, for this episode only."""
    api_key: str
    """A key to send with every call: it reaches no real provider (the proxy holds the real one)."""
    model: str
    """The model name to ask for (the proxy answers whatever name is sent)."""
    scores_prompts: bool = False
    """Whether the policy is a model that continues and scores raw prompts (``/completions`` with ``echo``:
    an `Endpoint` whose provider has `complete_text`); an in-process policy answers chat only."""
    agent: str = "model"
    """Task mode: which agent the harness runs: ``model`` (a chat agent on `base_url`), ``reference``
    (the task's own solution), ``null`` (does nothing) or ``random``. Rollout mode: always ``model``."""


@attrs.frozen(kw_only=True)
class NativeResult:
    """How a native loop's episode ended: its judgment, and what it recorded besides the model calls."""

    judgment: Judgment | None
    """The format's own verdict (None when it could not judge: then say why in `error`)."""
    status: Status = Status.OK
    error: str | None = None
    messages: tuple[dict[str, Any], ...] = ()
    """The transcript as the format keeps it, when it keeps one."""
    steps: tuple[Step, ...] = ()
    info: dict[str, Any] = attrs.field(factory=dict)
    """Format-specific facts (JSON-able): logs, test output, the sandbox image digest..."""
