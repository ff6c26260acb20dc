"""Task code that needs nltk data as soon as it is imported, as lm-eval's ifeval does."""

import nltk

nltk.data.find("tokenizers/nenyax_absent")  # raises LookupError: the data was never downloaded


def process_results(doc, results):
    return {"exact_match": 1.0}
