"""Which of NeMo Gym's agent protocols a resources server speaks, and whether Nenyax plays it.

A resources server is played by one of nemo-gym's agents (``responses_api_agents``), named in its
configs. Nenyax speaks two of their protocols: ``simple_agent``'s (``/seed_session``, a route per
tool, ``/verify``) and ``gymnasium_agent``'s (``/reset``, then ``/step`` per model turn, a reward
each step). The routes a server serves tell which it is; its configs tell which agent nemo-gym's own
runner would play it with, and an agent Nenyax does not speak is refused in one sentence rather than
played another way.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from nenyax.core import UsageError

SIMPLE = "simple"
"""simple_agent's protocol: /seed_session, tool routes, /verify."""
GYMNASIUM = "gymnasium"
"""gymnasium_agent's protocol (resources_servers.gymnasium.GymnasiumServer): /reset, /step."""
AGENTS = {"simple_agent": SIMPLE, "gymnasium_agent": GYMNASIUM}
"""nemo-gym's agents whose protocol Nenyax speaks."""
GYMNASIUM_MAX_STEPS = 10
"""gymnasium_agent's default ``max_steps`` (nemo-gym 0.4.0), when the server's config names none."""
_SPOKEN = "simple_agent's (/seed_session, tools, /verify) and gymnasium_agent's (/reset, /step)"


def check_agents(server: str, agents: Mapping[str, object]) -> None:
    """Refuse a server whose configs name only agents Nenyax does not speak (none named: decided by routes)."""
    if agents and not any(agent in AGENTS for agent in agents):
        names = ", ".join(sorted(agents))
        msg = (
            f"nemo-gym plays the server {server!r} with its {names}, whose protocol Nenyax does not speak "
            f"(it speaks {_SPOKEN}), so Nenyax cannot play it the way nemo-gym does."
        )
        raise UsageError(msg)


def from_routes(where: str, routes: Collection[str] | None) -> str:
    """The protocol the POST `routes` a server serves belong to (unknown routes: simple_agent's, as before)."""
    if routes is None:
        return SIMPLE
    paths = set(routes)
    if {"/seed_session", "/verify"} <= paths:
        return SIMPLE
    if {"/reset", "/step"} <= paths:
        return GYMNASIUM
    shown = ", ".join(sorted(paths)) or "no POST route"
    msg = (
        f"The server at {where} serves the routes of neither simple_agent (/seed_session, /verify) nor "
        f"gymnasium_agent (/reset, /step), only {shown}, so Nenyax cannot play it."
    )
    raise UsageError(msg)


def max_steps(agents: Mapping[str, object], protocol: str) -> int | None:
    """The ``max_steps`` the server's config gives the agent of `protocol`, if any."""
    for agent, steps in agents.items():
        if AGENTS.get(agent) == protocol and isinstance(steps, int) and not isinstance(steps, bool) and steps > 0:
            return steps
    return None
