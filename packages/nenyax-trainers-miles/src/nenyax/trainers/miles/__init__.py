"""Any Nenyax environment in miles (its agent-function hook, a reward model, a group filter, `abort`) and in
slime (its generate hook), played against the trainer's own inference."""

from nenyax.trainers.miles._version import __version__
from nenyax.trainers.miles.agent import abort, run_agent
from nenyax.trainers.miles.rewards import keep_group, reward
from nenyax.trainers.miles.rows import prompt_rows
from nenyax.trainers.miles.slime import custom_generate

__all__ = ["__version__", "abort", "custom_generate", "keep_group", "prompt_rows", "reward", "run_agent"]
