"""Task code that needs nltk data when it scores (a tokenizer, say): data this machine has not got."""

import nltk


def process_results(doc, results):
    nltk.data.find("tokenizers/nenyax_absent")  # raises LookupError: the data was never downloaded
    return {"exact_match": 1.0}
