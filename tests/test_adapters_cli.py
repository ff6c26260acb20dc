"""The gymnasium and hf adapters through the real CLI (`python -m nenyax.cli`), in a fresh process."""

import json
import subprocess
import sys


def nenyax(*args):
    return subprocess.run([sys.executable, "-m", "nenyax.cli", *args], capture_output=True, text=True, check=False)


def test_check_of_a_jsonl_file_is_audited(tmp_path):
    path = tmp_path / "capitals.jsonl"
    rows = [("France", "Paris"), ("Japan", "Tokyo"), ("Peru", "Lima"), ("Kenya", "Nairobi")]
    path.write_text("".join(json.dumps({"question": f"Capital of {c}?", "answer": a}) + "\n" for c, a in rows))
    done = nenyax("check", f"hf:{path}", "--json", "--samples", "3")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["tier"] == "audited"


def test_check_of_taxi_is_audited():
    done = nenyax("check", "gymnasium:Taxi-v4", "--require", "audited")
    assert done.returncode == 0, done.stderr
    assert "Tier: audited" in done.stdout


def test_unknown_gymnasium_id_exits_2_with_suggestions():
    done = nenyax("check", "gymnasium:Taxi-v9")
    assert done.returncode == 2
    assert "Did you mean 'Taxi-v4'" in done.stderr + done.stdout
    assert "Traceback" not in done.stderr


def test_missing_dataset_column_exits_2_listing_the_columns(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("q,a\nOne plus one?,2\n")
    done = nenyax("check", f"hf:{path}?prompt_column=question")
    assert done.returncode == 2
    assert "no prompt column 'question'; its columns are q, a" in done.stderr + done.stdout
