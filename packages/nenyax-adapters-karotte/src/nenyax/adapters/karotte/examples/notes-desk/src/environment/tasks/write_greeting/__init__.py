"""Write a greeting into a file: graded by a scoring script (an `ExecutableJudge`), 1 or 0."""

import sys
from pathlib import Path
from typing import final

from karotte import Step, Task, kill_processes
from karotte.judges import ExecutableJudge

from environment import STUDENT_UID
from environment.paths import STUDENT_DATA_DIR
from environment.system_prompts import SYSTEM_PROMPT

GREETING = STUDENT_DATA_DIR / "greeting.txt"


@final
class WriteGreeting(Task):
    id = "write-greeting"

    @property
    def system_prompt(self) -> str:
        return SYSTEM_PROMPT

    @property
    def steps(self):
        return [WriteStep(config=self.config)]

    @property
    def tools(self):
        return ["bash"]


class WriteStep(Step):
    @property
    def submission_paths(self) -> tuple[Path, ...]:
        return (GREETING,)

    @property
    def instructions(self) -> str:
        return f"Use the `bash` tool to write the line `hello, desk` into {GREETING}, then say done."

    @property
    def judge(self):
        return ExecutableJudge(
            [sys.executable, "-m", "environment.tasks.write_greeting.scoring_script", str(GREETING), "score.json"]
        )

    def pre_scoring_hook(self):
        kill_processes(STUDENT_UID)
