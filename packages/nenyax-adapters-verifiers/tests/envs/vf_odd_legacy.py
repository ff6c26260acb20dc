"""Legacy environments that misbehave on purpose, named as ``verifiers:vf_odd_legacy:<attr>``."""

import verifiers as vf
from datasets import Dataset


class RaisingEnv(vf.MultiTurnEnv):
    """A multi-turn environment whose env_response raises (a bug in the environment's own loop)."""

    async def env_response(self, messages, state, **kwargs):
        raise RuntimeError("the environment broke on purpose")


def raising():
    """Two turns: the first model reply reaches env_response, which raises."""
    dataset = Dataset.from_list([{"question": "Say hi.", "answer": "hi"}])
    rubric = vf.Rubric(funcs=[lambda completion, **kw: 1.0])
    return RaisingEnv(eval_dataset=dataset, rubric=rubric, max_turns=2)


def brevity(completion, **kwargs):
    """1 for a reply under 20 characters."""
    text = completion[-1]["content"] if completion else ""
    return 1.0 if 0 < len(text or "") < 20 else 0.0


def no_answer():
    """Rows without an answer column: rewarded on length only, so there is no reference."""
    dataset = Dataset.from_list([{"question": "Greet me briefly."}, {"question": "Say something short."}])
    return vf.SingleTurnEnv(eval_dataset=dataset, rubric=vf.Rubric(funcs=[brevity]))


READY = vf.SingleTurnEnv(
    eval_dataset=Dataset.from_list([{"question": "What is 2+2?", "answer": "4"}]),
    rubric=vf.Rubric(funcs=[lambda completion, answer, **kw: float(answer in (completion[-1]["content"] or ""))]),
)
"""A ready Environment instance (``verifiers:vf_odd_legacy:READY``)."""


def format_only(completion, **kwargs):
    """A metric: it is recorded, and weighs nothing in the reward."""
    return 1.0


def no_reward():
    """A rubric with a metric only (weight 0): nothing judges the episode, so verifiers' 0.0 is no verdict."""
    rubric = vf.Rubric()
    rubric.add_metric(format_only)
    dataset = Dataset.from_list([{"question": "Say hi.", "answer": "hi"}, {"question": "Say bye.", "answer": "bye"}])
    return vf.SingleTurnEnv(eval_dataset=dataset, rubric=rubric)
