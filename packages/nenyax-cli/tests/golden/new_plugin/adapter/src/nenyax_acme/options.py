"""The `acme:` URI's options, declared once: each key's type, bounds, default and help.

`OPTIONS.read(uri)` checks a URI's query (``acme:reverse?words=5``): an unknown key, or a value of the
wrong type or out of bounds, is one `BadURIError` sentence (with a did-you-mean), and every key you do
not set has its default. Add a key here, and read it where the environment is built (`adapter.py`).
"""

from __future__ import annotations

from nenyax.core.toolkit.options import Option, Options

from nenyax_acme.environment import WORDS

OPTIONS = Options(
    "acme",
    Option("words", int, default=len(WORDS), minimum=1, maximum=len(WORDS), help="How many words (tasks) to list."),
)
"""The query keys `acme:` URIs take."""
