"""Nenyax core: one contract for every RL environment.

    from nenyax.core import load
    env = load("reasoning_gym:basic_arithmetic")
    traj = env.rollout("reference")
    traj.judgment.score

Every public name is importable from here, lazily (PEP 562): importing ``nenyax.core`` or a plugin's
registration module (``nenyax.core.hookspecs``) loads no cattrs, aiohttp or check code; a name's
module is imported the first time the name is used. Inside, one folder per layer, each importing
only the layers below it: ``contract`` < ``plugins`` < ``models`` < ``engine`` < ``tiers``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from nenyax.core._version import __version__

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    # errors
    **dict.fromkeys(
        (
            "BadURIError",
            "CannotTravelError",
            "DuplicatePluginError",
            "EnvironmentFailure",
            "EpisodeInterrupted",
            "InfraFailure",
            "ManifestError",
            "NenyaxError",
            "PluginLoadError",
            "PolicyFailure",
            "RequestRefused",
            "RetryablePolicyFailure",
            "UnknownPluginError",
            "UnsupportedPolicyError",
            "UsageError",
            "VerifierFailure",
            "WorkerLostError",
        ),
        "nenyax.core.errors",
    ),
    # contract
    **dict.fromkeys(("Capabilities", "Manifest", "Mode", "Split"), "nenyax.core.contract.manifest"),
    **dict.fromkeys(
        (
            "Group",
            "JudgeVerdict",
            "Judgment",
            "ModelCall",
            "PolicyInfo",
            "Status",
            "Step",
            "Tier",
            "Timing",
            "ToolCall",
            "Trajectory",
        ),
        "nenyax.core.contract.trajectory",
    ),
    **dict.fromkeys(
        (
            "EpisodeEnded",
            "EpisodeStarted",
            "ModelCallEnded",
            "ModelCallStarted",
            "Observer",
            "StepTaken",
            "ToolCalled",
        ),
        "nenyax.core.contract.events",
    ),
    **dict.fromkeys(("ChatRequest", "Delta", "SAMPLING_KEYS", "TextRequest"), "nenyax.core.contract.chat"),
    **dict.fromkeys(("ColumnType", "RowSchema"), "nenyax.core.contract.row_schema"),
    **dict.fromkeys(("Forks", "TokenSample", "merged_samples", "step_samples"), "nenyax.core.contract.samples"),
    "new_id": "nenyax.core.contract.trajectory",
    "MAX_SEED": "nenyax.core.contract.uri",
    "TraceDelivery": "nenyax.core.plugins.tracer",
    "ReturnJudge": "nenyax.core.builtin_plugins.return_judge",
    **dict.fromkeys(("EnvURI", "parse_uri"), "nenyax.core.contract.uri"),
    # plugins
    **dict.fromkeys(("PluginSpec", "hookimpl"), "nenyax.core.hookspecs"),
    **dict.fromkeys(("Registry", "default_registry"), "nenyax.core.plugins.registry"),
    # models
    **dict.fromkeys(("DEFAULT_MODEL", "Endpoint"), "nenyax.core.models.endpoint"),
    # engine
    **dict.fromkeys(("Environment", "StepEnvironment"), "nenyax.core.engine.environment"),
    "Session": "nenyax.core.engine.session",
    "ToolSession": "nenyax.core.engine.tool_sessions",
    **dict.fromkeys(("JudgeUse", "Judging", "Scoring", "apply_judges", "judge_uses"), "nenyax.core.engine.judging"),
    **dict.fromkeys(
        ("CallablePolicy", "NullPolicy", "Policy", "RandomPolicy", "ReferencePolicy", "Turn", "as_policy"),
        "nenyax.core.engine.policies",
    ),
    **dict.fromkeys(("TrajectoryFile", "read_trajectories"), "nenyax.core.engine.sinks"),
    **dict.fromkeys(("Run", "RunConfig", "load_run", "new_run_dir"), "nenyax.core.engine.rundirs"),
    **dict.fromkeys(("Summary", "summarize"), "nenyax.core.engine.summary"),
    **dict.fromkeys(("ExportResult", "export"), "nenyax.core.engine.export"),
    **dict.fromkeys(("TaskExport", "export_tasks", "task_rows"), "nenyax.core.engine.export_tasks"),
    **dict.fromkeys(("EnvironmentSpec", "load"), "nenyax.core.engine.loader"),
    **dict.fromkeys(("EvalResult", "Evaluation", "SettingsDiffer", "evaluate"), "nenyax.core.engine.evaluation"),
    **dict.fromkeys(
        ("EvalSettings", "LearnerSettings", "ModelSettings", "PolicySettings", "TrainSettings"),
        "nenyax.core.engine.settings",
    ),
    # the one check framework (tiers and the conformance kit specialise it)
    **dict.fromkeys(
        ("Check", "CheckReport", "CheckResult", "Fail", "Finding", "Severity", "Skip", "Verdict"),
        "nenyax.core.contract.checking",
    ),
    # tiers
    **dict.fromkeys(
        ("TierCheck", "TierOutcome", "TierReport", "TierResult", "acheck", "check"),
        "nenyax.core.tiers.measure",
    ),
    # the other mode bases and what their native loops exchange
    **dict.fromkeys(("RolloutEnvironment", "TaskEnvironment"), "nenyax.core.engine.environment"),
    **dict.fromkeys(("NativeEpisode", "NativeResult"), "nenyax.core.engine.native_episode"),
    **dict.fromkeys(("AdapterCapabilities", "Listing", "LoadContext"), "nenyax.core.plugins.adapter"),
    "JudgeCapabilities": "nenyax.core.plugins.judge",
    "RecordingProxy": "nenyax.core.models.proxy",
    **dict.fromkeys(
        (
            "ExecResult",
            "MAX_OUTPUT_BYTES",
            "Mount",
            "NetworkPolicy",
            "OutputCallback",
            "Sandbox",
            "SandboxCapabilities",
            "SandboxHandle",
            "SandboxImage",
            "SandboxSpec",
            "create_sandbox",
        ),
        "nenyax.core.plugins.sandbox",
    ),
    "JsonlSink": "nenyax.core.engine.sinks",
}

_MODULES: dict[str, str] = {"serde": "nenyax.core.contract.serde"}
"""Public modules, importable as ``from nenyax.core import serde``."""

__all__ = ["__version__", *sorted(_EXPORTS), *sorted(_MODULES)]


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        value: Any = importlib.import_module(_MODULES[name])
    elif name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
    else:
        msg = f"module 'nenyax.core' has no attribute {name!r}"
        raise AttributeError(msg)
    globals()[name] = value  # the next lookup is a plain module attribute
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # static view of the lazy names, for type checkers and IDEs
    from nenyax.core.builtin_plugins.return_judge import ReturnJudge
    from nenyax.core.contract import serde
    from nenyax.core.contract.chat import SAMPLING_KEYS, ChatRequest, Delta, TextRequest
    from nenyax.core.contract.checking import (
        Check,
        CheckReport,
        CheckResult,
        Fail,
        Finding,
        Severity,
        Skip,
        Verdict,
    )
    from nenyax.core.contract.events import (
        EpisodeEnded,
        EpisodeStarted,
        ModelCallEnded,
        ModelCallStarted,
        Observer,
        StepTaken,
        ToolCalled,
    )
    from nenyax.core.contract.manifest import Capabilities, Manifest, Mode, Split
    from nenyax.core.contract.row_schema import ColumnType, RowSchema
    from nenyax.core.contract.samples import Forks, TokenSample, merged_samples, step_samples
    from nenyax.core.contract.trajectory import (
        Group,
        JudgeVerdict,
        Judgment,
        ModelCall,
        PolicyInfo,
        Status,
        Step,
        Tier,
        Timing,
        ToolCall,
        Trajectory,
        new_id,
    )
    from nenyax.core.contract.uri import MAX_SEED, EnvURI, parse_uri
    from nenyax.core.engine.environment import Environment, RolloutEnvironment, StepEnvironment, TaskEnvironment
    from nenyax.core.engine.evaluation import EvalResult, Evaluation, SettingsDiffer, evaluate
    from nenyax.core.engine.export import ExportResult, export
    from nenyax.core.engine.export_tasks import TaskExport, export_tasks, task_rows
    from nenyax.core.engine.judging import JudgeUse, Judging, Scoring, apply_judges, judge_uses
    from nenyax.core.engine.loader import EnvironmentSpec, load
    from nenyax.core.engine.native_episode import NativeEpisode, NativeResult
    from nenyax.core.engine.policies import (
        CallablePolicy,
        NullPolicy,
        Policy,
        RandomPolicy,
        ReferencePolicy,
        Turn,
        as_policy,
    )
    from nenyax.core.engine.rundirs import Run, RunConfig, load_run, new_run_dir
    from nenyax.core.engine.session import Session
    from nenyax.core.engine.settings import EvalSettings, LearnerSettings, ModelSettings, PolicySettings, TrainSettings
    from nenyax.core.engine.sinks import JsonlSink, TrajectoryFile, read_trajectories
    from nenyax.core.engine.summary import Summary, summarize
    from nenyax.core.engine.tool_sessions import ToolSession
    from nenyax.core.errors import (
        BadURIError,
        CannotTravelError,
        DuplicatePluginError,
        EnvironmentFailure,
        EpisodeInterrupted,
        InfraFailure,
        ManifestError,
        NenyaxError,
        PluginLoadError,
        PolicyFailure,
        RequestRefused,
        RetryablePolicyFailure,
        UnknownPluginError,
        UnsupportedPolicyError,
        UsageError,
        VerifierFailure,
        WorkerLostError,
    )
    from nenyax.core.hookspecs import PluginSpec, hookimpl
    from nenyax.core.models.endpoint import DEFAULT_MODEL, Endpoint
    from nenyax.core.models.proxy import RecordingProxy
    from nenyax.core.plugins.adapter import AdapterCapabilities, Listing, LoadContext
    from nenyax.core.plugins.judge import JudgeCapabilities
    from nenyax.core.plugins.registry import Registry, default_registry
    from nenyax.core.plugins.sandbox import (
        MAX_OUTPUT_BYTES,
        ExecResult,
        Mount,
        NetworkPolicy,
        OutputCallback,
        Sandbox,
        SandboxCapabilities,
        SandboxHandle,
        SandboxImage,
        SandboxSpec,
        create_sandbox,
    )
    from nenyax.core.plugins.tracer import TraceDelivery
    from nenyax.core.tiers.measure import (
        TierCheck,
        TierOutcome,
        TierReport,
        TierResult,
        acheck,
        check,
    )
