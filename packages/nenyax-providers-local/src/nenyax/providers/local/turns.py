"""Chat prompts as token ids, each later turn built on the exact ids of the turn before it.

A model's reply is a run of sampled ids. Rendering the whole transcript again at the next turn
tokenizes that reply's *text*, which can give other ids than the ones sampled (and the trainer then
computes the loss on tokens the policy never produced). `Transcripts` remembers each reply's exact ids
and builds the next prompt as: the previous prompt and reply ids, then the template's end-of-turn
tokens the reply did not sample itself, then the new messages rendered by the chat template.

That needs a template that renders earlier turns the same whatever follows them. Where it does not
(a template that drops earlier reasoning, or numbers the turns left), the prompt is the whole transcript
rendered again, and `Prompt.rerendered` says why in one sentence.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import attrs
import orjson

from nenyax.core.errors import UsageError
from nenyax.providers.local.tools import render, template_knows_tools

LOG = logging.getLogger("nenyax.providers.turns")
_MARK = "\ue000nenyax-end-of-turn\ue000"  # a private-use character no model writes, to find the template's suffix


def first_line(exc: BaseException) -> str:
    """An exception as one short clause for a sentence: its type and the first line of its message."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0].rstrip('.')}" if text else type(exc).__name__


class ChatTemplate:
    """A tokenizer's chat template: messages to text and ids, tools rendered in the form the model knows."""

    def __init__(self, tokenizer: Any, *, name: str) -> None:
        template = tokenizer.chat_template
        if not template:
            msg = f"The tokenizer of {name!r} has no chat template, so it cannot render chat requests."
            raise UsageError(msg)
        text = template if isinstance(template, str) else repr(sorted(template.items()))
        self.hash = "sha256:" + hashlib.sha256(text.encode()).hexdigest()
        self.knows_tools = template_knows_tools(text)
        self.tokenizer, self.name = tokenizer, name

    def text(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]], *, generation: bool) -> str:
        """`messages` rendered; with `generation`, ready for the assistant's next turn."""
        if not self.knows_tools:  # SmolLM2's: tools go into the system prompt, calls back as text
            messages, tools = render(messages, tools), ()
        try:
            rendered = self.tokenizer.apply_chat_template(
                list(messages), tools=list(tools) or None, add_generation_prompt=generation, tokenize=False
            )
        except Exception as exc:
            msg = f"The chat template of {self.name!r} cannot render these messages ({first_line(exc)})."
            raise UsageError(msg) from exc
        return str(rendered)

    def encode(self, text: str) -> list[int]:
        """Rendered text as ids (the template already holds every special token the model expects)."""
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def decode(self, ids: Sequence[int], *, special: bool = False) -> str:
        """The text of `ids`; special tokens only when `special`."""
        return str(self.tokenizer.decode(list(ids), skip_special_tokens=not special))

    def ids(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> list[int]:
        """The whole transcript rendered, ready for the assistant's turn."""
        return self.encode(self.text(messages, tools, generation=True))


@attrs.frozen
class Prompt:
    """A turn's prompt ids, and why they were rendered afresh instead of extending the turn before."""

    ids: list[int]
    rerendered: str | None = None
    """None where the prompt extends an earlier reply's exact ids, or where there is no earlier reply."""


def _text(content: Any) -> str:
    if isinstance(content, list):  # content parts: the text ones
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def _arguments(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def _said(message: dict[str, Any]) -> dict[str, Any]:
    """What a message says, without what a harness may add or drop when it hands a reply back (ids, nulls)."""
    said: dict[str, Any] = {"role": message.get("role"), "content": _text(message.get("content"))}
    functions = [c.get("function") or {} for c in message.get("tool_calls") or ()]
    calls = [{"name": f.get("name"), "arguments": _arguments(f.get("arguments"))} for f in functions]
    if calls:
        said["tool_calls"] = calls
    if message.get("role") == "tool":
        said["name"] = message.get("name")
    return said


def _key(messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> bytes:
    body = orjson.dumps([[_said(m) for m in messages], list(tools)], option=orjson.OPT_SORT_KEYS)
    return hashlib.blake2b(body, digest_size=16).digest()


@attrs.frozen
class _Reply:
    ids: tuple[int, ...]
    """The prompt's ids, then the reply's sampled ids."""
    sampled: str
    """The reply's text with its special tokens (an end-of-turn token it sampled, say)."""


class Transcripts:
    """The exact ids of recent replies, so that a later turn's prompt extends them (see the module)."""

    def __init__(self, template: ChatTemplate, *, size: int = 4096) -> None:
        self.template, self.size = template, size
        self._replies: OrderedDict[bytes, _Reply] = OrderedDict()
        self._said_why: set[str] = set()
        self._lock = threading.Lock()  # prompts are built on a model's worker thread, replies kept on the loop's

    def prompt(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] = ()) -> Prompt:
        """The prompt for the assistant's turn after `messages`."""
        for end in range(len(messages), 0, -1):
            if messages[end - 1].get("role") != "assistant":
                continue
            key = _key(messages[:end], tools)
            with self._lock:
                reply = self._replies.get(key)
                if reply is not None:
                    self._replies.move_to_end(key)
            if reply is not None:
                return self._extend(reply, messages, end, tools)
        return Prompt(self.template.ids(messages, tools))

    def remember(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]],
        reply: dict[str, Any],
        prompt_ids: Sequence[int],
        completion_ids: Sequence[int],
    ) -> None:
        """Keep the exact ids of `reply` (the assistant message returned for `messages`)."""
        key = _key([*messages, reply], tools)
        sampled = self.template.decode(completion_ids, special=True)
        with self._lock:
            self._replies[key] = _Reply(ids=(*prompt_ids, *completion_ids), sampled=sampled)
            self._replies.move_to_end(key)
            while len(self._replies) > self.size:
                self._replies.popitem(last=False)

    def _extend(
        self, reply: _Reply, messages: Sequence[dict[str, Any]], end: int, tools: Sequence[dict[str, Any]]
    ) -> Prompt:
        template = self.template
        whole = template.text(messages, tools, generation=True)
        before = template.text(messages[:end], tools, generation=False)
        if not whole.startswith(before):
            why = (
                f"The chat template of {template.name!r} renders earlier turns differently once later ones follow, "
                "so each turn's prompt is the transcript rendered again, not the earlier turns' exact ids."
            )
            return self._rerendered(messages, tools, why)
        # The template's end of an assistant turn (say "<|im_end|>\n"), less what the reply sampled of it.
        marked = template.text([*messages[: end - 1], {"role": "assistant", "content": _MARK}], tools, generation=False)
        suffix = marked[marked.rfind(_MARK) + len(_MARK) :] if _MARK in marked else ""
        overlap = next((k for k in range(len(suffix), 0, -1) if reply.sampled.endswith(suffix[:k])), 0)
        return Prompt([*reply.ids, *template.encode(suffix[overlap:] + whole[len(before) :])])

    def _rerendered(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]], why: str) -> Prompt:
        if why not in self._said_why:
            self._said_why.add(why)
            LOG.warning(why)
        return Prompt(self.template.ids(messages, tools), rerendered=why)
