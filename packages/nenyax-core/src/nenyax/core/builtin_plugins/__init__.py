"""Core's own plugins: the openai provider, the return judge, the incontext learner and the jsonl exporter.

The registration module `nenyax.core.plugin` names each by import string; nothing else in core imports them.
"""
