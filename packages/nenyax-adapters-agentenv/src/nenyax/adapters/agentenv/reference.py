"""The reference answer of a task whose every verifier is a response check: the words the checks look for.

AgentEnv has no reference solution of its own. A task graded only by `agent_prompt_response_verifier`
criteria of type `response_contains` states its gold answer in them (the needles a correct reply holds), as
a dataset's gold column does; the reference policy replies with those needles. A task with any other
verifier (a rubric, an env's outcome, a sandbox probe) has no reference here.
"""

from __future__ import annotations

from typing import Any

Answers = dict[str, str]
"""Each prompt's text -> the reply that holds every needle its checks look for."""


def answers_of(steps: Any) -> Answers | None:
    """The reference reply to each of the task's prompts, or None when a verifier is not a response check."""
    if not isinstance(steps, list):
        return None
    prompts = {s.get("prompt_id"): s.get("prompt") for s in steps if s.get("type") == "prompt_agent"}
    needles: dict[str, list[str]] = {}
    verifiers = [s for s in steps if str(s.get("type", "")).endswith("verifier")]
    for step in verifiers:
        criteria = step.get("criteria") or []
        if step.get("type") != "agent_prompt_response_verifier" or not criteria:
            return None
        for criterion in criteria:
            if criterion.get("type") != "response_contains" or not criterion.get("needles"):
                return None
            needles.setdefault(step.get("prompt_id"), []).extend(str(n) for n in criterion["needles"])
    if not verifiers or not all(isinstance(prompts.get(p), str) for p in needles):
        return None
    return {str(prompts[p]): " ".join(dict.fromkeys(words)) for p, words in needles.items()}
