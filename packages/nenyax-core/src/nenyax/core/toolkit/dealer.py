"""The executor dealer: what a backend that plays episodes elsewhere (processes, Ray) shares.

`Dealer` is the skeleton: play, stop every worker on Ctrl-C, always close, then raise the first failure
or one `WorkerLostError` (`workers_lost`). A dealer refuses what cannot travel before anything starts
(`environment_spec`, `policy_ticket`), hands every trajectory that comes back over in this process
(`hand_over`: the sink writes it, then the caller's callback), and records an episode lost with its
worker as the one ``infra_error`` trajectory (`lost_trajectory`). The contract is `Executor.play`'s.
"""

from __future__ import annotations

from nenyax.core.engine.executors import (
    Dealer,
    Executor,
    Job,
    Plan,
    TrajectoryFinished,
    default_workers,
    hand_over,
    lost_trajectory,
    publish_played_elsewhere,
    workers_lost,
)
from nenyax.core.engine.policies import CallablePolicy
from nenyax.core.engine.travel import PolicyTicket, environment_spec, policy_ticket

__all__ = [
    "CallablePolicy",
    "Dealer",
    "Executor",
    "Job",
    "Plan",
    "PolicyTicket",
    "TrajectoryFinished",
    "default_workers",
    "environment_spec",
    "hand_over",
    "lost_trajectory",
    "policy_ticket",
    "publish_played_elsewhere",
    "workers_lost",
]
