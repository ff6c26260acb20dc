"""Import every module named on the command line (`wheels` runs it in each wheel's bare venv): one that fails
to import with only what its wheel declares ends the run with its traceback."""

import importlib
import sys

for module in sys.argv[1:]:
    importlib.import_module(module)
