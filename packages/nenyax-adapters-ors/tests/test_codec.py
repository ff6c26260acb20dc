"""The text codec: what a chat model is shown, and how its reply becomes a tool call."""

import pytest

from nenyax.adapters.ors.codec import blocks_text, parse_reply, system_prompt
from nenyax.core import PolicyFailure, Status, load

TOOLS = ["hint", "submit"]


@pytest.mark.parametrize(
    "reply",
    [
        'I will answer.\n<tool_call>{"name": "submit", "arguments": {"answer": "15"}}</tool_call>',
        '<tool_call>\n```json\n{"name": "submit", "arguments": {"answer": "15"}}\n```\n</tool_call>',
        '<tool_call>{"name": "submit", "arguments": "{\\"answer\\": \\"15\\"}"}',  # cut before the closing tag
        '{"name": "submit", "input": {"answer": "15"}}',
        'Sure: {"name": "submit", "parameters": {"answer": "15"}} done.',
    ],
)
def test_tool_calls_are_read_in_the_forms_models_write(reply):
    assert parse_reply(reply, TOOLS, None) == {"name": "submit", "input": {"answer": "15"}}


def test_the_last_tool_call_wins_and_a_call_without_arguments_has_empty_input():
    reply = '<tool_call>{"name": "submit", "arguments": {"answer": "1"}}</tool_call> no, <tool_call>{"name": "hint"}'
    assert parse_reply(reply, TOOLS, None) == {"name": "hint", "input": {}}


@pytest.mark.parametrize(
    ("reply", "sentence"),
    [
        ("The answer is 15.", "The reply has no tool call; end it with <tool_call>"),
        ("<tool_call>submit 15</tool_call>", "The <tool_call> in the reply is not a JSON object"),
        ('<tool_call>{"arguments": {}}</tool_call>', "names no tool"),
        ('<tool_call>{"name": "submit", "arguments": [1]}</tool_call>', "must be a JSON object, not list"),
    ],
)
def test_a_reply_without_a_usable_call_is_a_policy_failure(reply, sentence):
    with pytest.raises(PolicyFailure, match=sentence.replace("(", r"\(")) as info:
        parse_reply(reply, TOOLS, None)
    assert "\n" not in str(info.value)


def test_a_plain_reply_goes_to_the_plain_reply_tool():
    assert parse_reply(" Paris ", TOOLS, ("answer", "answer")) == {"name": "answer", "input": {"answer": "Paris"}}
    assert parse_reply("done", TOOLS, ("finish", None)) == {"name": "finish", "input": {}}


def test_the_system_prompt_names_each_tool_and_its_arguments():
    tools = [
        {"name": "hint", "description": "Get a hint.", "input_schema": None},
        {
            "name": "submit",
            "description": "Submit the final answer.",
            "input_schema": {"properties": {"answer": {"type": "string"}}, "required": ["answer"]},
        },
    ]
    prompt = system_prompt("mathenv", tools, None)
    assert "- hint: Get a hint. Takes no arguments." in prompt
    assert "- submit: Submit the final answer. Takes arguments answer (string, required)." in prompt
    assert '<tool_call>{"name": "<tool>", "arguments": {...}}</tool_call>' in prompt
    assert "without a tool call" in system_prompt("mathenv", tools, ("submit", "answer"))


def test_image_blocks_are_named_not_dumped():
    text = blocks_text([{"type": "text", "text": "Look:"}, {"type": "image", "mimeType": "image/png", "data": "AAA"}])
    assert text == "Look:\n[image (image/png), not shown]"


def test_a_chat_model_plays_through_the_codec(ors_server, chat):
    env = load(f"ors:{ors_server.url}/mathenv")
    model = chat(
        '<tool_call>{"name": "hint", "arguments": {}}</tool_call>',
        '<tool_call>{"name": "submit", "arguments": {"answer": "15"}}</tool_call>',
    )
    traj = env.rollout(model, task="test/1")
    assert traj.status is Status.OK
    assert traj.score == 1.0
    assert len(traj.steps) == 2
    first, second = model.seen
    assert first[0]["role"] == "system"
    assert "submit" in first[0]["content"]
    assert first[1] == {"role": "user", "content": "What is 3*5?"}
    assert second[-1] == {"role": "user", "content": "Result of hint:\nCompute it step by step."}
    assert traj.steps[1].text.startswith("<tool_call>")


def test_a_reply_the_codec_cannot_read_ends_policy_error_scored_0(ors_server, chat):
    traj = load(f"ors:{ors_server.url}/mathenv").rollout(chat("It is 15."), task="test/1")
    assert traj.status is Status.POLICY_ERROR
    assert traj.score == 0.0
    assert "The reply has no tool call" in traj.error
    assert traj.steps[0].text == "It is 15."


def test_terminal_tool_option_sends_a_plain_reply_to_submit(ors_server, chat):
    env = load(f"ors:{ors_server.url}/mathenv?terminal_tool=submit")
    assert env.manifest.extra["plain_reply_tool"] == "submit"
    traj = env.rollout(chat("15"), task="test/1")
    assert traj.status is Status.OK
    assert traj.score == 1.0
    assert traj.steps[0].action == {"name": "submit", "input": {"answer": "15"}}
