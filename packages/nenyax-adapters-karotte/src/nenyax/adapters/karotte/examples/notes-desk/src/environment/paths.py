"""Where the student's files are: in the container (the Containerfile makes these), or the project's folders."""

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent.parent
_IN_CONTAINER = "KAROTTE_CONTAINERIZED" in os.environ

STUDENT_DATA_DIR = Path("/workdir/data") if _IN_CONTAINER else PROJECT_ROOT / "student_data"
