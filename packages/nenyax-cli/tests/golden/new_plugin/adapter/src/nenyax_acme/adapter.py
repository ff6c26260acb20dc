"""The `acme` format: URIs `acme:<environment>` load here.

Its one environment, `acme:reverse`, shows a word and asks for it spelled backwards: one turn, judged
by exact match. It claims only what `nenyax check` can prove of it (stable task ids, a reference policy),
and so reaches the audited tier. An adapter keeps one file per role, named as every first-party adapter
names them: ``options.py`` (the URI's options), ``environment.py`` (the manifest, task ids, sessions),
``session.py`` (one episode), and where a format needs them ``codec.py`` (what a chat model reads and
writes), ``wire.py`` (the protocol to a server), ``reference.py`` (the reference policy's answers) and
``judgment.py`` (how an episode is judged). This file only parses the URI and builds the environment,
raising `BadURIError` (one sentence) for what does not exist.
"""

from __future__ import annotations

from nenyax.core import BadURIError, EnvURI, LoadContext

from nenyax_acme.environment import WORDS, ReverseEnvironment
from nenyax_acme.options import OPTIONS


class AcmeAdapter:
    """The `acme` adapter (what the plugin's factory returns): loads `acme:reverse`."""

    def load(self, uri: EnvURI, context: LoadContext) -> ReverseEnvironment:
        """The environment `uri` names; anything else is one `BadURIError` sentence saying what exists."""
        if uri.target != "reverse":
            msg = f"The acme format has one environment, 'reverse'; there is no {uri.target!r}."
            raise BadURIError(msg)
        read = OPTIONS.read(uri)
        return ReverseEnvironment(uri.raw, WORDS[: read["words"]])

    def examples(self) -> list[str]:
        """URIs that load here, offline: the conformance kit checks each."""
        return ["acme:reverse"]
