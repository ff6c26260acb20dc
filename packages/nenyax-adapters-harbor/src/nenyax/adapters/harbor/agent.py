"""`ProxiedTerminus2`: harbor's terminus-2 agent, unchanged but for how often it asks the proxy again.

harbor's LiteLLM client retries a failed call three times with 4-15 s waits, and terminus-2 retries that
three times more: some 40 s before a failed episode ends. In front of Nenyax's recording proxy that
waiting buys nothing: the proxy (and the provider behind it) already retried what can be retried, and
the failure it answers with is already the episode's verdict. So the client's own retries are removed;
terminus-2's loop, prompts, parsing and tmux session are harbor's.
"""

from __future__ import annotations

from typing import Any

from tenacity import stop_after_attempt

try:
    from harbor.agents.terminus_2.terminus_2 import Terminus2
except ImportError as exc:  # harbor absent (Python 3.11): the module imports, the adapter refuses to load
    from nenyax.adapters.harbor._missing import absent_or_raise

    absent_or_raise(exc, "harbor's terminus-2 agent (harbor.agents.terminus_2)")
    from nenyax.adapters.harbor._missing import Terminus2


class ProxiedTerminus2(Terminus2):
    """terminus-2 whose model client asks once per turn attempt (see the module docstring)."""

    def _init_llm(self, *args: Any, **kwargs: Any) -> Any:
        llm = super()._init_llm(*args, **kwargs)
        call = type(llm).call
        if hasattr(call, "retry_with"):  # tenacity's decorator: the same call, one attempt
            llm.call = call.retry_with(stop=stop_after_attempt(1)).__get__(llm)
        return llm
