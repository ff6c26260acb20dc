"""A task whose scoring crashes: lm-eval's own failure inside the loop (the tests' env_error case)."""


def process_results(doc, results):
    raise RuntimeError("this task's process_results is broken")
