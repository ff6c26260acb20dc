"""Scores the greeting file: 1 when it holds `hello, desk`, else 0 (karotte reads {"score", "metadata"})."""

import json
import sys
from pathlib import Path

if __name__ == "__main__":
    submission, output = Path(sys.argv[1]), Path(sys.argv[2])
    text = submission.read_text().strip() if submission.is_file() else ""
    score = 1.0 if text == "hello, desk" else 0.0
    output.write_text(json.dumps({"score": score, "metadata": {"found": text[:80]}}))
