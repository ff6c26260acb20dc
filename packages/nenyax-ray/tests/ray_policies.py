"""Policies the Ray workers import by name (pytest's importlib mode makes test modules unimportable by name).

conftest.py puts this folder on the ``PYTHONPATH`` of the Ray instance it starts, so every worker imports
this module as the driver does. Each policy answers the ``arith`` fake's questions correctly (`add_up`)
and reads what to do from files in the folder named by `CONTROL`, so one Ray instance serves every test.
"""

import asyncio
import os
from pathlib import Path

from nenyax_testsupport.fakes import add_up

CONTROL = "NENYAX_RAY_TEST_CONTROL"
"""A folder: ``stall_on`` / ``die_on`` hold the question a policy stalls or dies on; ``played`` logs each play."""


def _control() -> Path:
    return Path(os.environ[CONTROL])


def _log(observation: str) -> None:
    with open(_control() / "played", "a") as log:
        log.write(f"{os.getpid()}\t{observation}\n")


async def stall_once(observation: str) -> str:
    """`add_up`; the first time it is shown the question in ``stall_on``, it writes its pid to ``stalled``
    and waits ten minutes first (so a test can kill the worker mid-episode); every later time it answers."""
    _log(observation)
    control = _control()
    if observation == (control / "stall_on").read_text():
        try:
            with open(control / "stalled", "x") as mark:
                mark.write(str(os.getpid()))
        except FileExistsError:
            pass
        else:
            await asyncio.sleep(600)
    return add_up(observation)


def die_on(observation: str) -> str:
    """`add_up`, except that the question in ``die_on`` ends the process playing it (every time)."""
    _log(observation)
    if observation == (_control() / "die_on").read_text():
        os._exit(7)
    return add_up(observation)
