"""OpenEnv's Task API, read by the adapter: against OpenEnv's own server (`create_app`) with and without it.

openenv 0.10 serves the Task API routes (`/list_environments`, `/{env}/splits`, `/{env}/tasks`...) and
answers 501 for an environment that lacks the `TaskProvider` methods; openenv-core 0.3 has no such
routes. Either way a server without a usable Task API keeps seed tasks. The round trip through
`nenyax serve` (a served dataset checked back) is in the integration suite, tests/test_openenv.py.
"""

import pytest
from guess_env import TaskGuessEnv
from openenv_servers import openenv_distribution

from nenyax.adapters.openenv.tasks import ServedTask, build_catalog
from nenyax.core import BadURIError, Split, Status, Tier, check, load

WIRE_010 = openenv_distribution().startswith("openenv ")
SEEDS = ["seed/0", "seed/1", "seed/2"]
needs_task_api = pytest.mark.skipif(not WIRE_010, reason="openenv-core 0.3 serves no Task API")


@needs_task_api
def test_the_servers_task_ids_and_splits_are_the_tasks(servers):
    env = load(servers.uri("tasks"))
    assert env.manifest.splits == (Split(name="train", count=3), Split(name="test", count=2))
    assert env.task_ids() == ["train-0", "train-1", "train-2"]
    assert env.task_ids("test") == ["test-0", "test-1"]
    assert env.task_ids("test", limit=1) == ["test-0"]
    assert env.manifest.extra["tasks"] == (
        "From the server's Task API (/taskguessenv/splits and /tasks): 3 in split 'train', 2 in split 'test', "
        "with the ids it lists; an episode resets with its task's split and index."
    )
    assert env.manifest.extra["tasks_vary"] is True
    assert env.manifest.extra["seeds"] == (
        "Honoured: 3 sessions reset with task 'train-0' and seed 0 began from the same observation and state."
    )
    with pytest.raises(BadURIError, match=r"the splits 'train', 'test', not 'seeds'"):
        env.task_ids("seeds")


@needs_task_api
def test_each_task_resets_onto_its_own_split_and_index(servers):
    env = load(servers.uri("tasks", "reference=solution"))
    for split, secrets in TaskGuessEnv.SECRETS.items():
        for index, secret in enumerate(secrets):
            traj = env.rollout("reference", task=f"{split}-{index}", seed=3)
            assert (traj.task_id, traj.seed, traj.status, traj.score) == (f"{split}-{index}", 3, Status.OK, 1.0)
            assert traj.steps[0].action == {"guess": secret}  # the task's secret, not seed 3's
    # Without a task the server picks by seed (OpenEnv's convention); it names no task, so none is recorded.
    bare = env.rollout("reference", seed=7)
    assert (bare.task_id, bare.steps[0].action) == (None, {"guess": 42})  # Random(7).randint(1, 100)


@needs_task_api
def test_an_unknown_task_id_names_one_that_exists(servers):
    env = load(servers.uri("tasks"))
    with pytest.raises(BadURIError, match=r"'seed/1' is not a task of .*; its task ids look like 'train-0'"):
        env.session(task="seed/1")


@needs_task_api
def test_the_uris_tasks_key_caps_each_split(servers):
    env = load(servers.uri("tasks", "tasks=1"))
    assert env.manifest.splits == (Split(name="train", count=1), Split(name="test", count=1))
    assert env.task_ids() == ["train-0"]
    assert "1 of its 3 in split 'train', 1 of its 2 in split 'test'" in env.manifest.extra["tasks"]


def test_a_task_api_server_checks_to_audited_on_its_own_tasks(servers):
    report = check(servers.uri("tasks", "reference=solution"))
    assert report.tier is Tier.AUDITED, [(r.id, r.evidence) for r in report.failed]
    [starts] = [r for r in report.results if r.id == "connectable/episode-starts"]
    task = starts.evidence.split()[2]  # "Session of <task> opened ..."
    assert task in (["train-0", "train-1", "train-2"] if WIRE_010 else [f"seed/{n}" for n in range(100)])


def test_a_reset_that_ignores_split_and_index_keeps_seed_tasks_and_says_why(servers):
    env = load(servers.uri("tasks-ignored"))
    assert env.task_ids(limit=3) == SEEDS
    assert env.manifest.splits == (Split(name="seeds", count=100),)
    if WIRE_010:
        assert env.manifest.extra["tasks"] == (
            "The server lists tasks (/ignoringtaskguessenv/tasks), but 'train-0', 'train-1' and 'train-2' all "
            "began the same way: its reset ignores split and index (OpenEnv drops reset keys its reset() does not "
            "declare), so tasks are reset seeds seed/<n>."
        )
        assert env.manifest.extra["tasks_vary"] is False
    assert env.manifest.extra["seeds"].startswith("Honoured: 3 sessions reset with seed 0 began")
    assert env.manifest.capabilities.seeded


def test_a_server_without_the_task_api_keeps_seed_tasks(servers):
    env = load(servers.uri("seeded"))
    assert env.task_ids(limit=3) == SEEDS
    assert env.manifest.splits == (Split(name="seeds", count=100),)
    route = "/guessenv/splits answered HTTP 501" if WIRE_010 else "/list_environments answered HTTP 404"
    assert env.manifest.extra["tasks"] == f"No Task API ({route}), so tasks are reset seeds seed/<n>."
    assert env.manifest.extra["tasks_vary"] is None
    assert env.rollout("null", task="seed/7").task_id == "seed/7"


def test_specs_without_unique_ids_are_named_by_split_and_index():
    # What a server may list (OpenEnv leaves a task spec untyped): no ids, or ids that repeat across splits.
    listed = {"train": [{"id": "a"}, {"id": "b"}], "test": [{"id": "a", "index": 4}, "free text"]}
    catalog = build_catalog("env", listed, {"train": 2, "test": None}, None)
    assert [t.id for t in catalog.by_id.values()] == ["train/0", "train/1", "test/4", "test/1"]
    assert catalog.find("test/4", "openenv:ws://h:1") == ServedTask(id="test/4", split="test", index=4)
    assert "2 in split 'train', 2 in split 'test', with ids <split>/<index>" in catalog.sentence()
    unique = build_catalog("env", {"all": [{"id": 7}, {"id": "x"}]}, {"all": 9}, 1)
    assert ([t.id for t in unique.splits["all"]], unique.ids_from) == (["7"], "server")
    assert "1 of its 9 in split 'all', with the ids it lists" in unique.sentence()
