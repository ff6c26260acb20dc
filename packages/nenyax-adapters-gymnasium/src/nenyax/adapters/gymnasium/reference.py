"""The reference policy of tabular environments: exact planning on the env's own transition table.

Gymnasium's toy-text environments (FrozenLake, Taxi, CliffWalking) expose their dynamics as
``env.unwrapped.P[state][action] = [(probability, next_state, reward, terminated), ...]``. Policy
iteration on that table gives an optimal policy, so the reference is an oracle, not a heuristic.
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from gymnasium import spaces

GAMMA = 0.999
"""Close to 1 so the plan maximises the return itself (e.g. FrozenLake's success probability), yet
strictly below 1 so every policy's values are finite and the linear solve is well posed."""


@attrs.frozen
class TabularPlan:
    """An optimal policy over the states of a tabular environment, and facts about its dynamics."""

    policy: np.ndarray
    """Best action per state."""
    values: np.ndarray
    """Discounted value of each state under `policy`."""
    stochastic: bool
    """Some (state, action) has more than one possible outcome."""

    def action(self, observation: Any) -> int:
        """The planned action in state `observation`."""
        return int(self.policy[int(observation)])


def table_of(env: Any) -> dict[int, dict[int, list[tuple[float, int, float, bool]]]] | None:
    """The transition table of a tabular env (Discrete states and actions with ``P``), or None."""
    unwrapped = env.unwrapped
    table = getattr(unwrapped, "P", None)
    if not isinstance(table, dict) or not table:
        return None
    if not isinstance(env.observation_space, spaces.Discrete) or not isinstance(env.action_space, spaces.Discrete):
        return None
    if env.observation_space.start != 0 or env.action_space.start != 0:
        return None
    return table


def plan(
    table: dict[int, dict[int, list[tuple[float, int, float, bool]]]], n_states: int, n_actions: int
) -> TabularPlan:
    """Policy iteration on `table` (exact policy evaluation by a linear solve)."""
    # Dense P[s, a, s'] without terminal outcomes (their future is worth 0) and the expected reward R[s, a].
    transitions = np.zeros((n_states, n_actions, n_states))
    rewards = np.zeros((n_states, n_actions))
    stochastic = False
    for state, by_action in table.items():
        for action, outcomes in by_action.items():
            stochastic = stochastic or sum(1 for p, *_ in outcomes if p > 0) > 1
            for probability, nxt, reward, done in outcomes:
                rewards[state, action] += probability * reward
                if not done:
                    transitions[state, action, nxt] += probability
    policy = np.zeros(n_states, dtype=np.int64)
    states = np.arange(n_states)
    identity = np.eye(n_states)
    values: Any = np.zeros(n_states)
    for _ in range(1000):  # policy iteration converges in a handful of rounds; the bound is a guard
        values = np.linalg.solve(identity - GAMMA * transitions[states, policy], rewards[states, policy])
        q = rewards + GAMMA * transitions @ values
        best = q.max(axis=1)
        # Keep the current action on ties, so the iteration cannot cycle between equal policies.
        improve = q[states, policy] < best - 1e-9 * np.maximum(1.0, np.abs(best))
        if not improve.any():
            break
        policy = np.where(improve, q.argmax(axis=1), policy)
    return TabularPlan(policy=policy, values=values, stochastic=stochastic)
