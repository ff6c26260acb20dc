"""Count the words of a file and say the number: graded by a `RegexJudge` on the final message."""

import re
from typing import final

from karotte import Step, Task
from karotte.judges import RegexJudge

from environment.paths import STUDENT_DATA_DIR
from environment.system_prompts import SYSTEM_PROMPT


@final
class CountWords(Task):
    id = "count-words"

    @property
    def system_prompt(self) -> str:
        return SYSTEM_PROMPT

    @property
    def steps(self):
        return [CountStep(config=self.config)]

    @property
    def tools(self):
        return ["bash"]


class CountStep(Step):
    @property
    def instructions(self) -> str:
        return (
            f"How many words does {STUDENT_DATA_DIR / 'notes.txt'} hold? Use the `bash` tool to find out, "
            "then answer in your final message in the form `words: N`."
        )

    @property
    def judge(self):
        return RegexJudge([re.compile(r"words:\s*8\b")])
