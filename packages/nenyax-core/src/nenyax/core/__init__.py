"""Nenyax core: one contract for every RL environment.

from nenyax.core import load
env = load("reasoning_gym:basic_arithmetic")
traj = env.rollout("reference")
traj.judgment.score
"""

from nenyax.core._version import __version__
from nenyax.core.chat import ChatRequest
from nenyax.core.check import CheckReport, CheckResult, Outcome, acheck, check
from nenyax.core.endpoint import DEFAULT_MODEL, Endpoint
from nenyax.core.environment import Environment, Session, StepEnvironment
from nenyax.core.errors import (
    BadURIError,
    DuplicatePluginError,
    EnvironmentFailure,
    InfraFailure,
    ManifestError,
    NenyaxError,
    PluginLoadError,
    PolicyFailure,
    UnknownPluginError,
    UnsupportedPolicyError,
    UsageError,
    VerifierFailure,
)
from nenyax.core.hookspecs import PluginSpec, hookimpl
from nenyax.core.loader import load
from nenyax.core.manifest import Capabilities, Manifest, Mode, Split
from nenyax.core.policies import CallablePolicy, NullPolicy, Policy, RandomPolicy, ReferencePolicy, Turn, as_policy
from nenyax.core.registry import Registry, default_registry
from nenyax.core.runs import Sink, new_run_dir, read_trajectories
from nenyax.core.trajectory import (
    Group,
    Judgment,
    ModelCall,
    PolicyInfo,
    Status,
    Step,
    Tier,
    Timing,
    Trajectory,
)
from nenyax.core.uri import EnvURI, parse_uri

__all__ = [
    "BadURIError",
    "CallablePolicy",
    "ChatRequest",
    "Capabilities",
    "CheckReport",
    "CheckResult",
    "DEFAULT_MODEL",
    "DuplicatePluginError",
    "Endpoint",
    "EnvURI",
    "Environment",
    "EnvironmentFailure",
    "Group",
    "InfraFailure",
    "Judgment",
    "Manifest",
    "ManifestError",
    "Mode",
    "ModelCall",
    "NenyaxError",
    "NullPolicy",
    "Outcome",
    "PluginLoadError",
    "PluginSpec",
    "Policy",
    "PolicyFailure",
    "PolicyInfo",
    "RandomPolicy",
    "ReferencePolicy",
    "Registry",
    "Session",
    "Sink",
    "Split",
    "Status",
    "Step",
    "StepEnvironment",
    "Tier",
    "Timing",
    "Trajectory",
    "Turn",
    "UnknownPluginError",
    "UnsupportedPolicyError",
    "UsageError",
    "VerifierFailure",
    "__version__",
    "acheck",
    "as_policy",
    "check",
    "default_registry",
    "hookimpl",
    "load",
    "new_run_dir",
    "parse_uri",
    "read_trajectories",
]
