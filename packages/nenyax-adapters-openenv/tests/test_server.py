"""Against real OpenEnv servers (OpenEnv's own `create_app`): tiers, the manifest, episodes, the text codec."""

import asyncio
import random
from pathlib import Path

import pytest
from guess_env import GuessAction
from openenv_servers import openenv_distribution

from nenyax.core import BadURIError, Status, Tier, TierOutcome, check, load, serde

WIRE_010 = openenv_distribution().startswith("openenv ")


def results(report):
    return {r.id: r for r in report.results}


def test_seeded_server_is_trainable_and_says_seeds_are_honoured(servers):
    report = check(servers.uri("seeded"))
    assert report.tier is Tier.TRAINABLE
    assert results(report)["trainable/seed-recreates"].outcome is TierOutcome.PASSED
    assert report.manifest.extra["seeds"].startswith("Honoured: 3 sessions reset with seed 0 began from the same")
    assert (
        results(report)["audited/reference-beats-null"].evidence == "The environment does not claim `reference_policy`."
    )


def test_seeded_server_with_its_state_as_reference_is_audited(servers):
    report = check(servers.uri("seeded", "reference=solution"))
    assert report.tier is Tier.AUDITED, [(r.id, r.evidence) for r in report.failed]


def test_unseeded_server_is_evaluable_and_says_seeds_are_not_honoured(servers):
    report = check(servers.uri("unseeded", scheme="http"))
    assert report.tier is Tier.EVALUABLE
    assert results(report)["trainable/seed-recreates"].outcome is TierOutcome.SKIPPED
    assert (
        report.manifest.extra["seeds"]
        == "Not honoured: sessions reset with seed 0 began from different observation and states."
    )
    assert not report.manifest.capabilities.seeded
    assert not report.manifest.capabilities.stable_task_ids


def test_the_uri_may_state_seeding_instead_of_measuring_it(servers):
    opted_out = check(servers.uri("seeded", "seeded=false"))
    assert opted_out.tier is Tier.EVALUABLE
    assert "not measured" in opted_out.manifest.extra["seeds"]
    claimed = load(servers.uri("unseeded", "seeded=true")).manifest
    assert claimed.capabilities.seeded
    assert claimed.extra["seeds"] == ("The URI says the server honours seeds (seeded=true); not measured.")


def test_manifest_comes_from_metadata_and_schema(servers):
    env = load(servers.uri("seeded"))
    manifest = env.manifest
    assert (manifest.format, manifest.name, manifest.mode.value) == ("openenv", "guess", "step")
    assert manifest.format_version == ("0.10" if WIRE_010 else "0.3")
    assert manifest.description.startswith("Guess a secret number from 1 to 100")
    assert manifest.action.startswith('a JSON object with "guess" (integer from 1 to 100, required)')
    assert '"tries_left" (integer): Guesses left' in manifest.observation
    assert manifest.extra["action_schema"] == GuessAction.model_json_schema()
    assert manifest.extra["seeds_vary"] is True
    assert env.task_ids(limit=3) == ["seed/0", "seed/1", "seed/2"]
    assert len(env.task_ids()) == 100
    assert load(servers.uri("seeded")).digest == serde.digest(manifest)


def test_reference_plays_the_secret_from_the_state(servers):
    env = load(servers.uri("seeded", "reference=solution"))
    traj = env.rollout("reference", task="seed/7")
    # random.Random(7).randint(1, 100) is 42: the server's own secret, read over the wire.
    assert traj.status is Status.OK
    assert traj.score == 1.0
    assert [s.action for s in traj.steps] == [{"guess": 42}]
    assert traj.steps[0].observation == {"hint": "guess a number", "low": 1, "high": 100, "tries_left": 7}
    assert traj.steps[0].terminated
    assert traj.judgment.judge == "openenv:guess"
    # openenv 0.10 sends the observation's metadata (kept in the step's info); openenv-core 0.3 sends none.
    assert traj.steps[0].info == ({"metadata": {"tries": 1}} if WIRE_010 else {})


def test_null_policy_plays_until_the_server_says_done(servers):
    traj = load(servers.uri("seeded")).rollout("null", task="seed/7")
    assert traj.status is Status.OK
    assert traj.score == 0.0
    assert len(traj.steps) == 7
    assert [s.terminated for s in traj.steps] == [False] * 6 + [True]
    assert traj.steps[1].observation["hint"] == "higher"
    assert traj.judgment.feedback == "done after 7 step(s) with return 0"


def test_a_judgment_in_the_final_metadata_is_the_episodes_judgment(servers):
    traj = load(servers.uri("judged", "reference=solution")).rollout("reference", task="seed/7")
    if WIRE_010:
        assert traj.judgment.passed is True
        assert traj.judgment.feedback == "found in 1 tries"
        assert traj.judgment.components == {"tries": 1.0}
        assert traj.judgment.judge == "openenv:guess (the server's judgment)"
    else:  # openenv-core 0.3 sends no metadata: the reward sum it is
        assert traj.judgment.passed is None
        assert traj.judgment.judge == "openenv:guess"
    assert traj.score == 1.0


def test_other_query_keys_reach_reset(servers):
    traj = load(servers.uri("seeded", "tries=3")).rollout("null", task="seed/7")
    assert len(traj.steps) == 3
    assert traj.steps[0].observation["tries_left"] == 3


def test_a_tasks_seed_wins_and_a_bare_seed_names_its_task(servers):
    env = load(servers.uri("seeded", "reference=solution"))
    assert env.rollout("reference", task="seed/7", seed=3).seed == 7
    bare = env.rollout("reference", seed=7)
    assert bare.task_id == "seed/7"
    assert bare.steps[0].action == {"guess": 42}
    with pytest.raises(BadURIError, match="its task ids look like 'seed/0'"):
        env.rollout("null", task="7")


def test_synchronous_session(servers):
    env = load(servers.uri("seeded"))
    session = env.session(task="seed/7")
    try:
        assert session.observation["hint"] == "guess a number"
        assert not session.done
        step = session.act({"guess": 50})
        assert step.action == {"guess": 50}
        assert session.observation["hint"] == "lower"
        assert session.act({"guess": 42}).reward == 1.0
        assert session.done
    finally:
        session.close()


def test_many_concurrent_episodes_beyond_the_servers_capacity(servers):
    env = load(servers.uri("seeded", "reference=solution"))
    # 24 at once against a server of 8 sessions: the rest wait for a free session (CAPACITY_REACHED is retried).
    trajs = env.rollouts("reference", tasks=12, n=2, concurrency=24)
    assert len(trajs) == 24
    assert {t.status for t in trajs} == {Status.OK}
    assert {t.score for t in trajs} == {1.0}
    # The random policy is seeded per episode and sample: the same sample replays.
    again = [env.rollout("random", task="seed/3").steps for _ in range(2)]
    assert again[0] == again[1]


def test_a_chat_model_plays_through_the_text_codec(servers, chat):
    bounds = {}

    def binary_search(turn):
        low, high = turn.observation["low"], turn.observation["high"]
        if turn.index:  # narrow the range by the hint to the last guess
            hint = turn.observation["hint"]
            low, high = (
                (bounds["guess"] + 1, bounds["high"]) if hint == "higher" else (bounds["low"], bounds["guess"] - 1)
            )
        bounds.update(low=low, high=high, guess=(low + high) // 2)
        return f"Halving the range. <action>{bounds['guess']}</action>"

    chat = chat(binary_search)
    traj = load(servers.uri("seeded")).rollout(chat, task="seed/7")
    assert traj.status is Status.OK
    assert traj.score == 1.0
    assert traj.steps[-1].action == {"guess": 42}
    assert all(s.text.startswith("Halving the range.") for s in traj.steps)
    system, first = chat.seen[0]
    assert system["role"] == "system"
    assert "You act in the OpenEnv environment guess." in system["content"]
    assert first["content"] == 'Observation: {"hint": "guess a number", "low": 1, "high": 100, "tries_left": 7}'
    assert chat.seen[1][-1]["content"].startswith("Reward for your last action: 0.\nObservation: {")


def test_reference_naming_a_missing_state_field_is_a_user_error(servers):
    with pytest.raises(BadURIError) as caught:
        load(servers.uri("seeded", "reference=answer"))
    assert str(caught.value) == (
        "The server's state has no field 'answer' (reference=answer); its fields: episode_id, secret, solution, step_count."
    )


def test_reference_holding_no_valid_action_is_a_user_error(servers):
    with pytest.raises(BadURIError, match=r"The state field 'episode_id' does not hold a valid action"):
        load(servers.uri("seeded", "reference=episode_id"))


def test_a_bare_state_value_is_wrapped_into_a_one_field_action(servers):
    traj = load(servers.uri("seeded", "reference=secret")).rollout("reference", task="seed/7")
    assert traj.steps[0].action == {"guess": 42}
    assert traj.score == 1.0


def test_async_api(servers):
    env = load(servers.uri("seeded"))

    async def main():
        session = await env.asession(task="seed/7")
        try:
            return [(await session.aact({"guess": g})).reward for g in (10, 42)], session.done
        finally:
            await session.aclose()

    assert asyncio.run(main()) == ([0.0, 1.0], True)
    assert random.Random(7).randint(1, 100) == 42  # the secret the tests rely on


def test_the_readme_tier_table_is_what_check_measures(servers):
    # Each row's URI, with this session's port, checked on the installed wire (0.10 or 0.3 column).
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    section = readme.split("## Tiers of the test environments", 1)[1].split("\n\n", 3)[2]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in section.splitlines()[2:]]
    apps = {"seeded": "seeded", "unseeded": "unseeded", "tasks": "tasks"}
    assert len(rows) == 4
    for name, uri, tier_010, tier_03, _why in rows:
        app = apps[name.split()[0].strip(",")]
        query = uri.strip("`").partition("?")[2]
        measured = check(servers.uri(app, query)).tier.label
        assert measured == (tier_010 if WIRE_010 else tier_03), (name, uri, measured)
