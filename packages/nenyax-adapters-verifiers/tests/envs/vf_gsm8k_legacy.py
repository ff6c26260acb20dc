"""A gsm8k-style legacy verifiers environment built offline (an in-memory `datasets.Dataset`).

It stands in for an Environments Hub package (``verifiers:vf-gsm8k-legacy`` imports this module, as
``vf-install`` would have installed it): the same system prompt and boxed-answer parser as the Hub's
gsm8k, with an exact-match reward so the tests need no math-verify judging.
"""

import verifiers as vf
from datasets import Dataset

ROWS = [
    (
        "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. How many clips did Natalia sell altogether?",
        "72",
    ),
    (
        "Weng earns $12 an hour for babysitting. Yesterday, she just did 50 minutes of babysitting. How much did she earn?",
        "10",
    ),
    (
        "Betty needs $100 for a wallet. She has half of the money, her parents give her $15 and her grandparents twice as much as her parents. How much more money does she need?",
        "5",
    ),
    ("James writes a 3-page letter to 2 different friends twice a week. How many pages does he write a year?", "624"),
    (
        "Mark has a garden with flowers: 10 yellow, 80% more purple, and 25% as many green as yellow and purple. How many flowers does he have?",
        "35",
    ),
    (
        "Albert buys 2 large pizzas of 16 slices and 2 small ones of 8 slices. How many slices does he eat if he eats them all?",
        "48",
    ),
]
SYSTEM = "Think step by step, then put your final answer within \\boxed{}."


def correct_answer(parser, completion, answer, **kwargs):
    """1 when the boxed answer is the gold one."""
    return 1.0 if (parser.parse_answer(completion) or "").strip() == answer else 0.0


def load_environment(num_examples: int = -1, eval_split: bool = True):
    """The environment, with its first `num_examples` rows (all by default), as the eval split or the train one."""
    rows = ROWS if num_examples < 0 else ROWS[:num_examples]
    dataset = Dataset.from_list([{"question": q, "answer": a} for q, a in rows])
    parser = vf.ThinkParser(extract_fn=vf.extract_boxed_answer)
    rubric = vf.Rubric(funcs=[correct_answer, parser.get_format_reward_func()], weights=[1.0, 0.0], parser=parser)
    split = {"eval_dataset": dataset} if eval_split else {"dataset": dataset}
    return vf.SingleTurnEnv(system_prompt=SYSTEM, parser=parser, rubric=rubric, **split)
