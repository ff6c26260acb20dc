"""What the test modules import by name besides the fake SDK (this folder is on `pythonpath`)."""

ENV_URI = "reasoning_gym:basic_arithmetic?size=6&seed=11"
"""Tasks whose prompts are short: the embedded model answers them in a few seconds on a CPU."""
