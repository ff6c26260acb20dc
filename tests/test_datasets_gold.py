"""A user's CSV with `NA`, `007` and an empty gold, through the real CLI (`python -m nenyax.cli check`)."""

import json
import subprocess
import sys


def nenyax(*args):
    return subprocess.run([sys.executable, "-m", "nenyax.cli", *args], capture_output=True, text=True, check=False)


def test_check_of_a_csv_with_na_007_and_an_empty_gold(tmp_path):
    path = tmp_path / "user.csv"
    path.write_text(
        "question,answer\nWhat does N/A abbreviate?,NA\nBond's number?,007\nUnknown?,\nSix times seven?,42\n"
    )
    done = nenyax("check", f"hf:{path}", "--json", "--samples", "5")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    # The empty row is no task: the three others are sampled and the reference answers "NA" and "007" as written.
    assert report["tier"] == "audited", [r["evidence"] for r in report["results"] if r["outcome"] != "passed"]
    manifest = report["manifest"]
    assert manifest["splits"][0]["count"] == 3
    assert manifest["extra"]["rows"] == 4
    assert manifest["extra"]["bad_rows"] == {
        "count": 1,
        "first": ["Line 4 of user.csv (task train/2) has an empty 'answer'."],
    }
    assert "Line 4 of user.csv (task train/2) has an empty 'answer'." in manifest["description"]


def test_a_csv_row_without_a_question_exits_2_naming_it(tmp_path):
    path = tmp_path / "user.csv"
    path.write_text("question,answer\nOne?,1\n,2\n")
    done = nenyax("check", f"hf:{path}")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "Line 3 of user.csv has an empty 'question', so it has no question" in done.stderr + done.stdout
