import json

import pytest

# Helper modules beside the tests (math_figures, legacy_mathjudge) import by name: `pythonpath` in pyproject.toml.

ROWS = [
    {"id": f"q{i}", "question": f"What is {a} times {b}?", "answer": str(a * b), "note": "x"}
    for i, (a, b) in enumerate([(3, 4), (7, 8), (12, 12), (9, 6), (15, 3), (21, 2)])
]


@pytest.fixture
def rows():
    return [dict(r) for r in ROWS]


@pytest.fixture
def jsonl(tmp_path, rows):
    path = tmp_path / "mult.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path
