"""openreward's ORS server (a superset of ors-sdk's): version, terminal tools, refusing calls after the end."""

import pytest

from nenyax.core import Status, check, load
from nenyax.core.contract.trajectory import Tier


@pytest.fixture(scope="module")
def capital_uri(openreward_server):
    return f"ors:{openreward_server.url}/capitalenv"


def test_the_manifest_records_the_server_version_and_its_terminal_tool(capital_uri):
    from importlib.metadata import version

    manifest = load(capital_uri).manifest
    assert manifest.format_version == version("openreward")
    assert manifest.tools == ("lookup",)  # the terminal tool is hidden from the model, as openreward intends
    assert manifest.extra["terminal_tool"]["name"] == "answer"
    assert manifest.extra["plain_reply_tool"] == "answer"
    assert manifest.extra["reference"] == "calls answer(answer=<task.answer>)"


def test_a_plain_reply_is_the_answer_and_tool_calls_still_work(capital_uri, chat):
    model = chat('<tool_call>{"name": "lookup", "arguments": {}}</tool_call>', "Tokyo")
    traj = load(capital_uri).rollout(model, task="test/1")
    assert traj.status is Status.OK
    assert traj.score == 1.0
    assert [s.action for s in traj.steps] == [
        {"name": "lookup", "input": {}},
        {"name": "answer", "input": {"answer": "Tokyo"}},
    ]
    assert "without a tool call" in model.seen[0][0]["content"]


def test_a_call_after_the_end_is_refused_by_the_server(capital_uri):
    import asyncio

    env = load(capital_uri)

    async def main():
        session = await env.asession(task="test/0")
        try:
            await session.aact(session.reference_action())
            return await session.aact({"name": "lookup"})
        finally:
            await session.aclose()

    from nenyax.core import PolicyFailure

    with pytest.raises(PolicyFailure, match="the episode has finished"):
        asyncio.run(main())


def test_check_reaches_audited(capital_uri):
    report = check(capital_uri, samples=3)
    assert report.tier is Tier.AUDITED, [(r.id, r.evidence) for r in report.results]
