"""The adapter against NeMo Gym's own resources servers on loopback: mcqa, reasoning_gym and a tool server."""

import asyncio
import json
import os
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from nemo_gym_helpers import uri

from nenyax.adapters.nemo_gym import launcher
from nenyax.core import Status, Tier, ToolSession, check, load
from nenyax_testsupport.tables import sync_marked_block, tier_summary, updating


def test_mcqa_by_url_serves_its_rows_and_verifies_the_gold_letter(mcqa):
    env = load(uri(mcqa))
    try:
        manifest = env.manifest
        assert manifest.format == "nemo_gym"
        assert manifest.format_version == "unknown"
        assert env.task_ids() == [f"example/{i}" for i in range(5)]
        assert manifest.extra["gold_field"] == "expected_answer"
        assert manifest.tools == ()
        caps = manifest.capabilities
        assert caps.reference_policy
        assert caps.stable_task_ids
        assert caps.max_turns == 1
        assert not caps.tools
        ref = env.rollout("reference", task="example/0")
        assert ref.status is Status.OK
        assert ref.score == 1.0
        assert ref.judgment.passed
        assert ref.steps[0].info["verify"] == {"reward": 1.0, "extracted_answer": "B"}
        assert ref.judgment.feedback == "extracted answer: B"
        assert ref.judgment.judge.endswith("/verify")
        assert ref.steps[0].observation[0]["role"] == "user"
        assert "boxed" in ref.steps[0].observation[0]["content"]
        wrong = env.rollout(lambda observation: "\\boxed{A}", task="example/0")
        assert wrong.status is Status.OK
        assert wrong.score == 0.0
        assert wrong.judgment.passed is False
    finally:
        env.close()


def test_reasoning_gym_by_url_scores_the_answer_tag(reasoning_gym):
    env = load(uri(reasoning_gym))
    try:
        assert env.manifest.extra["gold_field"] == "answer"
        row = env.rows[4]
        good = env.rollout(lambda _: f"<answer>{row['answer']}</answer>", task="example/4")
        assert good.score == 1.0
        assert good.judgment.components["score"] == 1.0
        assert good.steps[0].info["verify"]["task_name"] == "knights_knaves"
        assert env.rollout("null", task="example/4").score == 0.0
    finally:
        env.close()


def test_a_server_started_by_name_is_shared_and_stopped_with_its_last_environment(nemo_python, nemo_gym_version):
    first = load("nemo_gym:mcqa")
    second = load("nemo_gym:mcqa")
    assert first.url == second.url
    assert first.digest == second.digest
    assert first.manifest.format_version == nemo_gym_version
    assert first.manifest.extra["started"] is True
    assert "example_with_template_metadata" in first.manifest.extra["datasets"]
    first.close()
    assert first.rollout("reference", task="example/1").score == 1.0  # still up: `second` holds it
    second.close()
    with pytest.raises((urllib.error.URLError, OSError)):
        urllib.request.urlopen(first.url + "/", timeout=5)


README = Path(__file__).resolve().parents[1] / "README.md"
# The servers measured for the README, and why each one stops below audited.
MEASURED = {
    "nemo_gym:mcqa": (Tier.AUDITED, ""),
    "nemo_gym:reasoning_gym": (Tier.AUDITED, ""),
    "nemo_gym:example_session_state_mgmt": (
        Tier.TRAINABLE,
        "Its rows hold no gold answer (the reward checks a counter), so no reference.",
    ),
    # The gymnasium-style servers (`/reset`, `/step`), played as nemo-gym's gymnasium_agent plays them.
    "nemo_gym:example_multi_turn_gymnasium": (Tier.AUDITED, ""),
    "nemo_gym:blackjack": (
        Tier.EVALUABLE,
        "It deals each hand from an unseeded `random.Random()`, so no seed recreates an episode: not trainable.",
    ),
}


@pytest.mark.timeout(900)  # measures the whole table: each server started, then checked
def test_the_readme_tier_table_is_measured(nemo_python):
    reports = {name: check(name) for name in MEASURED}
    lines = ["| URI | tasks | tier | why not audited |", "| --- | --- | --- | --- |"]
    for name, report in reports.items():
        tier, why = MEASURED[name]
        assert report.tier is tier, (name, [(r.id, r.evidence) for r in report.failed])
        tasks = report.manifest.splits[0].count
        lines.append(f"| `{name}` | {tasks} | {report.tier.label} | {why} |")
    blackjack = {r.id for r in reports["nemo_gym:blackjack"].failed}
    assert {"trainable/seed-recreates", "trainable/fresh-process"} <= blackjack
    table = "\n".join(lines) + f"\n\n{tier_summary(reports.values(), 'servers')}\n"
    found = sync_marked_block(README, "tiers", table, update=updating())
    assert found == table, "The README's tier table is stale; regenerate it with NENYAX_UPDATE_TIERS=1."


def test_the_tier_table_is_never_rewritten_on_ci(monkeypatch):
    """The table test asks nenyax_testsupport whether to rewrite, which refuses on CI, not the variable itself."""
    monkeypatch.setenv("NENYAX_UPDATE_TIERS", "1")
    monkeypatch.setenv("CI", "1")
    source = Path(__file__).read_text()
    # Written in two halves, so that this test's own text is not what it finds.
    assert "os.environ.get(" + '"NENYAX_UPDATE_TIERS")' not in source
    assert '"tiers", table, update=' + "updating())" in source
    with pytest.raises(RuntimeError, match="CI checks the tier tables"):
        updating()


def test_another_dataset_and_server_config_by_uri(nemo_python):
    env = load("nemo_gym:mcqa?dataset=example_with_template_metadata&config.grading_mode=lenient_answer_colon")
    try:
        assert env.manifest.splits[0].name == "example_with_template_metadata"
        assert env.task_ids()[0] == "example_with_template_metadata/0"
        gold = env.rows[0]["expected_answer"]
        # The config's grading mode wins over the row's: only "Answer: X" counts now, \boxed{} does not.
        assert env.rollout(lambda _: f"Answer: {gold}", task=env.task_ids()[0]).score == 1.0
    finally:
        env.close()


def test_the_sync_session_api(mcqa):
    env = load(uri(mcqa))
    try:
        session = env.session(task="example/2")
        assert not session.done
        step = session.act(session.reference_action())
        assert step.terminated
        assert step.reward == 1.0
        assert session.done
        assert session.judge([step]).score == 1.0
        session.close()
    finally:
        env.close()


def test_render_is_the_rows_prompt_and_the_codec_reads_tool_calls(mcqa, counter):
    env = load(uri(mcqa))
    try:
        messages = asyncio.run(_render(env, "example/0"))
        assert messages == [{"role": "user", "content": env.rows[0]["responses_create_params"]["input"][0]["content"]}]
    finally:
        env.close()
    env = load(uri(counter))
    try:
        session = env.session(task="example/0")
        system = session.render()[0]
        assert system["role"] == "system"
        assert "<tool_call>" in system["content"]
        assert "increment_counter" in system["content"]
        call = session.parse_action(
            'Sure. <tool_call>{"name": "increment_counter", "arguments": {"count": 1}}</tool_call>'
        )
        assert call == {"name": "increment_counter", "arguments": {"count": 1}}
        assert session.parse_action("The count is 6.") == "The count is 6."
        session.close()
    finally:
        env.close()


async def _render(env, task):
    session = await env.asession(task=task)
    try:
        return session.render()
    finally:
        await session.aclose()


def _counting_policy(observation):
    """Play example_session_state_mgmt's task: 'add A then add B then get the count'."""
    if observation[0].get("role") == "user":
        words = observation[-1]["content"].split()
        _counting_policy.todo = [int(words[1]), int(words[4])]
    if _counting_policy.todo:
        return {"name": "increment_counter", "arguments": {"count": _counting_policy.todo.pop(0)}}
    if observation[0].get("type") == "function_call_output" and "count" not in observation[0]["output"]:
        return {"name": "get_counter_value", "arguments": {}}
    return "done"


def test_tool_calls_keep_server_state_per_session_cookie(counter):
    env = load(uri(counter))
    try:
        assert env.manifest.tools == ("get_counter_value", "increment_counter")
        assert env.manifest.capabilities.multi_turn
        assert env.manifest.capabilities.max_turns == 10
        assert not env.manifest.capabilities.reference_policy  # its rows hold no gold answer
        traj = env.rollout(_counting_policy, task="example/0")  # initial 3, add 1, add 2: expected 6
        assert traj.status is Status.OK, traj.error
        assert traj.score == 1.0, traj.error
        actions = [s.action for s in traj.steps]
        assert actions[:2] == [{"name": "increment_counter", "arguments": {"count": c}} for c in (1, 2)]
        assert json.loads(traj.steps[2].info["tool_output"]) == {"count": 6}
        assert traj.steps[-1].terminated
        assert traj.steps[-1].action == "done"
        # The three tool actions are recorded as tool calls (the final answer is not one).
        assert [(c.name, c.arguments, c.step) for c in traj.tool_calls] == [
            ("increment_counter", {"count": 1}, 0),
            ("increment_counter", {"count": 2}, 1),
            ("get_counter_value", {}, 2),
        ]
        assert json.loads(traj.tool_calls[2].result) == {"count": 6}
        assert traj.tool_calls[2].duration_s > 0
    finally:
        env.close()


def test_a_session_offers_its_tools_for_a_native_tool_loop(counter):
    # What a trainer's own tool loop (TRL's environment_factory) reads: the row's tools as chat function
    # tools, the prompt as text, and each call's answer as text.
    env = load(uri(counter))
    try:
        session = env.session(task="example/0")
        assert isinstance(session, ToolSession)
        specs = {spec["function"]["name"]: spec["function"] for spec in session.tool_specs()}
        assert set(specs) == {"get_counter_value", "increment_counter"}
        assert specs["increment_counter"]["parameters"]["properties"]["count"]["type"] == "integer"
        assert session.task_text() == render_text(session)
        step = session.act(session.tool_action("increment_counter", {"count": 2}))
        assert session.tool_reply(step) == step.info["tool_output"]
        read = session.act(session.tool_action("get_counter_value", {}))
        assert json.loads(session.tool_reply(read)) == {"count": 5}  # the row starts at 3
        session.close()
    finally:
        env.close()


def render_text(session):
    """The prompt's own messages, as the row has them (the text codec's tool syntax left out)."""
    items = session.row["responses_create_params"]["input"]
    texts = [item["content"] if isinstance(item["content"], str) else item["content"][0]["text"] for item in items]
    return "\n\n".join(texts)


def test_concurrent_episodes_do_not_share_a_session(counter):
    env = load(uri(counter))

    async def one(task, adds):
        session = await env.asession(task=task)
        try:
            for n in adds:
                await session.aact({"name": "increment_counter", "arguments": {"count": n}})
            step = await session.aact({"name": "get_counter_value", "arguments": {}})
            return json.loads(step.info["tool_output"])["count"]
        finally:
            await session.aclose()

    async def both():
        return await asyncio.gather(one("example/0", [1, 1, 1]), one("example/1", [5]))

    try:
        # Initial counts are 3 and 6 (from each row's seed_session); a shared cookie would mix them.
        assert asyncio.run(both()) == [6, 11]
    finally:
        env.close()


def test_out_of_turns_the_server_judges_what_was_done(counter):
    env = load(uri(counter, max_turns=2))
    try:
        traj = env.rollout(lambda _: {"name": "increment_counter", "arguments": {"count": 1}}, task="example/0")
        assert traj.status is Status.OK
        assert len(traj.steps) == 2
        assert traj.steps[-1].truncated
        assert traj.score == 0.0
        assert traj.steps[-1].info["verify"]["reward"] == 0.0
    finally:
        env.close()


def test_rollouts_run_concurrently_against_one_server(mcqa):
    env = load(uri(mcqa))
    try:
        trajs = env.rollouts("reference", tasks=5, n=4, concurrency=8)
        assert len(trajs) == 20
        assert all(t.status is Status.OK and t.score == 1.0 for t in trajs)
    finally:
        env.close()


def test_the_servers_are_the_nemo_gym_release_the_session_names(nemo_gym_version):
    """A version lane (nemo-gym-0.6) names the release their server venv must hold
    (`NENYAX_NEMO_GYM_EXPECTED`); every other session, the one this package's server venv pins."""
    import tomllib

    table = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["tool"]["nenyax"]
    pinned = next(r for r in table["server-venv"]["requires"] if r.startswith("nemo-gym=="))
    expected = os.environ.get("NENYAX_NEMO_GYM_EXPECTED") or pinned.removeprefix("nemo-gym==")
    assert nemo_gym_version == expected


def test_launcher_reports_the_shipped_datasets(mcqa, nemo_gym_version):
    assert mcqa.version == nemo_gym_version
    assert nemo_gym_version.count(".") == 2
    assert mcqa.alive()
    assert mcqa.datasets["example"].endswith("resources_servers/mcqa/data/example.jsonl")
    assert launcher.SCRIPT.is_file()
