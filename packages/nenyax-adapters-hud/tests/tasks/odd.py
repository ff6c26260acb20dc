"""HUD tasks that break in each phase, for the failure tests (a file URI: hud:<path>/odd.py:<attr>)."""

from hud import Environment

env = Environment("odd")


@env.template(description="Echo a word; graded by exact match.")
async def echo(word: str):
    answer = yield f"Say {word}."
    yield 1.0 if str(answer).strip() == word else 0.0


@env.template(description="The grader raises after the answer.")
async def broken_grader(word: str):
    yield f"Say {word}."
    raise RuntimeError("the grader broke on purpose")
    yield 0.0  # never reached: the generator must have a second yield to be a template


@env.template(description="The template raises before its prompt.")
async def broken_setup(word: str):
    raise RuntimeError("the setup broke on purpose")
    yield word


@env.template(description="The grader returns an error grade.")
async def error_grade(word: str):
    yield f"Say {word}."
    yield {"score": 0.0, "isError": True, "content": "the grading service was unavailable"}


@env.template(description="A grade with a breakdown.")
async def graded(word: str):
    yield f"Say {word}."
    subscores = [{"name": "spelling", "value": 1.0, "weight": 0.5}, {"name": "style", "value": 0.0, "weight": 0.5}]
    yield {"score": 0.5, "subscores": subscores, "info": {"length": 3}, "content": "half marks"}


GRADED = graded(word="x")
words = [echo(word="apple"), echo(word="pear")]
for row in words:
    row.columns = {"answer": row.args["word"]}
BROKEN_GRADER = broken_grader(word="x")
BROKEN_SETUP = broken_setup(word="x")
ERROR_GRADE = error_grade(word="x")

down = Environment("down")


@down.initialize
async def _refuse():
    raise OSError("the runtime's daemon could not start")


@down.template(description="A task whose environment cannot start.")
async def unreachable(word: str):
    answer = yield f"Say {word}."
    yield 1.0 if answer == word else 0.0


DOWN = unreachable(word="x")
