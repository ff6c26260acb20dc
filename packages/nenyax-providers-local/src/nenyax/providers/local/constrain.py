"""Constrained decoding: which next tokens a request may sample (``guided_choice``, ``min_tokens``).

``guided_choice`` is vLLM's name for "reply with exactly one of these strings": each choice is
tokenized as the tokenizer itself would write it, the choices form a prefix tree of token ids, and
at every step only the children of the tokens generated so far may be sampled; once a whole choice
is written, the reply may only end (EOS). The recorded logprob stays the model's raw one, so a
learner sees how likely the model found the reply, and the request's parameters say it was
constrained.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs


@attrs.frozen
class ChoiceConstraint:
    """The valid continuations of a reply that must be one of a fixed set of token sequences."""

    sequences: tuple[tuple[int, ...], ...]
    eos_ids: frozenset[int]

    @classmethod
    def from_choices(
        cls, choices: Sequence[str], encode: Callable[[str], list[int]], eos_ids: frozenset[int]
    ) -> ChoiceConstraint:
        """Tokenize each choice with `encode` (no special tokens), as the model would write it."""
        return cls(tuple(tuple(encode(choice)) for choice in choices), eos_ids)

    def allowed(self, generated: Sequence[int]) -> list[int]:
        """Token ids that may come next after `generated` (EOS where a whole choice has been written).

        Empty only when `generated` left every choice, which the mask itself prevents.
        """
        depth = len(generated)
        prefix = tuple(generated)
        nexts: set[int] = set()
        for sequence in self.sequences:
            if sequence[:depth] != prefix:
                continue
            if len(sequence) == depth:
                nexts.update(self.eos_ids)
            else:
                nexts.add(sequence[depth])
        return sorted(nexts)
