"""The train loop: held-out decides, a harmful round is reverted, only trainable episodes are learned from,
a killed run resumes, and the incontext learner's examples survive a new process.

`SkillLearner` (core's fake learner, no model) answers a task of core's ``arith`` environment correctly
when the task's index, mod 10, is below its skill, so an update that raises the skill raises the
held-out score by a known amount.
"""

from __future__ import annotations

import json
import subprocess
import sys

import attrs
import pytest

from nenyax.core.builtin_plugins.incontext import Example, IncontextLearner, with_examples
from nenyax.core.contract.manifest import Split
from nenyax.core.contract.trajectory import Group, PolicyInfo, Status
from nenyax.core.engine.environment import Environment
from nenyax.core.engine.rundirs import TRAJECTORIES
from nenyax.core.engine.training import (
    CHECKPOINTS,
    HELDOUT,
    PLOT,
    Trainer,
    TrainSettings,
    read_rounds,
    set_aside,
    split_tasks,
    train,
)
from nenyax.core.errors import InfraFailure, UsageError
from nenyax_testsupport.fakes import ArithEnvironment, SkillLearner, SkillPolicy

SETTINGS = TrainSettings(rounds=2, group_size=2, tasks_per_round=4, heldout=20, concurrency=4)


@pytest.fixture
def env() -> Environment:
    return _arith(60)


def _arith(size: int) -> ArithEnvironment:
    return ArithEnvironment(f"arith:add?size={size}", size, 0)


def test_rounds_that_improve_held_out_are_kept_and_saved(env, tmp_path):
    learner = SkillLearner(step=3)
    rounds = train(env, learner, tmp_path, SETTINGS)
    assert [r.round for r in rounds] == [0, 1, 2]
    assert all(r.kept for r in rounds)
    scores = [r.heldout_score for r in rounds]
    assert scores[0] == 0.0
    assert scores[0] < scores[1] < scores[2]
    assert rounds[2].best_before == scores[1]
    assert rounds[2].revision == str(tmp_path / CHECKPOINTS / "round-0002")
    assert json.loads((tmp_path / CHECKPOINTS / "round-0002" / "skill.json").read_text()) == {"skill": 6}
    assert read_rounds(tmp_path) == rounds  # metrics.jsonl reads back as what the run returned
    assert rounds[1].update == {"loss": 1.0}
    assert rounds[1].trained_on == 8
    assert sum(1 for _ in (tmp_path / "trajectories.jsonl").open()) == 2 * 4 * 2
    assert sum(1 for _ in (tmp_path / HELDOUT).open()) == 3 * 20
    assert (tmp_path / PLOT).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_round_that_harms_held_out_is_reverted_to_the_best_revision(env, tmp_path):
    learner = SkillLearner(step=3)
    train(env, learner, tmp_path, TrainSettings(rounds=1, group_size=2, tasks_per_round=4, heldout=20))
    learner.step = -2  # a deliberately harmful update
    trainer = Trainer(env, learner, tmp_path, TrainSettings(rounds=2, group_size=2, tasks_per_round=4, heldout=20))
    trainer.resume()
    [harmful] = trainer.run()[2:]
    assert not harmful.kept
    assert harmful.heldout_score < harmful.best_before
    assert harmful.revision == str(tmp_path / CHECKPOINTS / "round-0001")
    assert learner.restored[-1] == harmful.revision
    assert learner.skill == 3
    assert not (tmp_path / CHECKPOINTS / "round-0002").exists()  # a reverted round leaves no checkpoint


def test_a_tie_is_not_an_improvement(env, tmp_path):
    learner = SkillLearner(step=0)
    [_, tie] = train(env, learner, tmp_path, TrainSettings(rounds=1, group_size=2, tasks_per_round=2, heldout=10))
    assert tie.heldout_score == tie.best_before
    assert not tie.kept


def test_only_trainable_episodes_reach_the_update_and_outages_are_not_scored(env, tmp_path):
    pool, _ = split_tasks(env, 20, 0)
    learner = SkillLearner(step=3, broken=pool)  # every training episode meets an outage
    [_, first] = train(env, learner, tmp_path, TrainSettings(rounds=1, group_size=2, tasks_per_round=4, heldout=20))
    assert first.train_statuses == {"infra_error": 8}
    assert first.trained_on == 0
    assert learner.seen == []
    assert first.train_score is None  # an outage is not a score of 0


def test_held_out_that_cannot_be_scored_stops_the_run(env, tmp_path):
    learner = SkillLearner()
    learner.eval_policy = lambda: SkillPolicy(0, "down", frozenset(env.task_ids()))
    with pytest.raises(InfraFailure, match="No held-out episode could be scored"):
        train(env, learner, tmp_path, SETTINGS)


def test_a_killed_run_resumes_after_its_last_finished_round(env, tmp_path):
    with pytest.raises(KeyboardInterrupt):
        train(env, SkillLearner(step=3, fail_on_round=2), tmp_path, SETTINGS)
    assert [r.round for r in read_rounds(tmp_path)] == [0, 1]
    fresh = SkillLearner(step=3)  # a new learner, as a new process builds it
    rounds = train(env, fresh, tmp_path, SETTINGS, resume=True)
    assert fresh.restored == [str(tmp_path / CHECKPOINTS / "round-0001")]
    assert [r.round for r in rounds] == [0, 1, 2]
    assert rounds[2].kept
    assert fresh.skill == 6


def test_held_out_comes_from_a_test_split_when_there_is_one(tmp_path):
    class TwoSplits(ArithEnvironment):
        def __init__(self):
            super().__init__("arith:add?size=30", 30, 0)
            self.manifest = attrs.evolve(self.manifest, splits=(Split(name="train"), Split(name="test")))

        def task_ids(self, split=None, limit=None):
            ids = super().task_ids()
            chosen = ids[20:] if split == "test" else ids[:20]
            return chosen[:limit] if limit else chosen

    env = TwoSplits()
    pool, held = split_tasks(env, 5, 0)
    assert held == env.task_ids("test")[:5]
    assert pool == env.task_ids("train")


def test_too_few_tasks_and_bad_sizes_are_one_sentence(tmp_path):
    with pytest.raises(UsageError, match=r"lists 10 task\(s\); training needs the 10 held-out ones plus at least one"):
        split_tasks(_arith(10), 10, 0)
    with pytest.raises(UsageError, match="group-size must be a whole number of at least 1, not 0"):
        TrainSettings(group_size=0)


def _group(*scored: tuple[str, str, float]) -> Group:
    from nenyax.core.contract.trajectory import Judgment, Mode, ModelCall, Trajectory

    members = tuple(
        Trajectory(
            env_uri="arith:add",
            manifest_digest="d",
            mode=Mode.STEP,
            task_id=task,
            seed=None,
            policy=PolicyInfo(kind="endpoint"),
            status=Status.OK,
            judgment=Judgment(score=score, passed=score == 1.0, judge="t"),
            model_calls=(
                ModelCall(
                    messages=({"role": "system", "content": "s"}, {"role": "user", "content": f"Q {task}"}),
                    response={"role": "assistant", "content": reply},
                ),
            ),
        )
        for task, reply, score in scored
    )
    return Group(group_id="g", task_id=members[0].task_id, trajectories=members)


def test_incontext_keeps_the_best_reply_of_a_group_that_told_its_members_apart():
    learner = IncontextLearner("local:smollm2-135m", examples=2)
    learner.update(
        [
            _group(("t1", "wrong", 0.0), ("t1", "<answer>7</answer>", 1.0)),
            _group(("t2", "a", 0.5), ("t2", "b", 0.5)),  # a tie teaches nothing
            _group(("t3", "x", 0.0), ("t3", "y", 0.0)),
            _group(("t4", "4 and 5 make 12", 0.0), ("t4", "the answer is 12", 0.02)),  # partial credit: not passed
        ]
    )
    assert learner.examples == (Example(task_id="t1", prompt="Q t1", reply="<answer>7</answer>", score=1.0),)
    messages = with_examples([{"role": "system", "content": "s"}, {"role": "user", "content": "Q9"}], learner.examples)
    assert [m["content"] for m in messages] == ["s", "Q t1", "<answer>7</answer>", "Q9"]
    assert learner.policy().info.revision == "examples-1-1"
    assert learner.eval_policy().endpoint.params["temperature"] == 0.0


def test_incontext_state_is_restored_in_a_new_process(tmp_path):
    learner = IncontextLearner("local:smollm2-135m", examples=3)
    learner.update([_group(("t1", "no", 0.0), ("t1", "yes", 1.0)), _group(("t2", "n", 0.2), ("t2", "y", 1.0))])
    revision = learner.save(tmp_path)
    code = (
        "import sys, json; from nenyax.core.builtin_plugins.incontext import IncontextLearner; "
        "l = IncontextLearner('local:smollm2-135m', examples=3); l.restore(sys.argv[1]); "
        "print(json.dumps([[e.task_id, e.reply, e.score] for e in l.examples] + [l.policy().info.revision]))"
    )
    done = subprocess.run([sys.executable, "-c", code, revision], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == [["t1", "yes", 1.0], ["t2", "y", 1.0], learner.revision]


def test_set_aside_keeps_the_finished_rounds_lines_and_moves_the_rest_beside_them(tmp_path):
    path = tmp_path / "trajectories.jsonl"
    path.write_bytes(b'{"a": 1}\n{"a": 2}\n{"a": 3}\n{"a": 4}\n{"cut')  # a killed writer's last line, cut off
    assert set_aside(path, keep=2) == 2
    assert path.read_bytes() == b'{"a": 1}\n{"a": 2}\n'
    assert (tmp_path / "trajectories.interrupted.jsonl").read_bytes() == b'{"a": 3}\n{"a": 4}\n'
    assert set_aside(path, keep=2) == 0  # nothing more to move: the file is left as it is
    assert path.read_bytes() == b'{"a": 1}\n{"a": 2}\n'
    assert set_aside(tmp_path / "missing.jsonl", keep=0) == 0


def test_judges_put_on_the_environment_decide_what_is_kept(env, tmp_path):
    # A judge that passes exactly the answers the verifier fails, and the score composed from it alone: the
    # learner that gets better by the verifier gets worse by the judge, so its round is reverted.
    settings = attrs.evolve(
        SETTINGS, rounds=1, judges=("nenyax_testsupport.fakes:answered_wrong",), score="answered_wrong"
    )
    learner = SkillLearner(step=3)
    rounds = train(env, learner, tmp_path, settings)
    assert rounds[0].heldout_score == 1.0  # skill 0: every answer wrong, every one passed by the judge
    assert rounds[1].heldout_score < 1.0  # skill 3: some answers right now, which the judge fails
    assert not rounds[1].kept
    assert learner.restored == [rounds[0].revision]
    heldout = [json.loads(line) for line in (tmp_path / HELDOUT).open()]
    assert {tuple(v["label"] for v in t["verdicts"]) for t in heldout} == {("native", "answered_wrong")}


def test_a_group_judge_judges_each_training_group_whole(env, tmp_path):
    # A group judge written in Python: the answer first in alphabetical order of its group scores 1. Every training
    # group is judged once whole (the skill policy answers a task the same each time: ties, all 1); held-out
    # episodes are each a group of one.
    settings = attrs.evolve(SETTINGS, rounds=1, judges=("nenyax_testsupport.fakes:FirstInOrder",), score="native")
    train(env, SkillLearner(step=3), tmp_path, settings)
    played = [json.loads(line) for line in (tmp_path / TRAJECTORIES).open()]
    assert len(played) == settings.group_size * settings.tasks_per_round
    groups: dict[str, list[float]] = {}
    for trajectory in played:
        assert [v["label"] for v in trajectory["verdicts"]] == ["native", "FirstInOrder"]
        groups.setdefault(trajectory["group_id"], []).append(trajectory["judgment"]["components"]["FirstInOrder"])
        (grouped,) = [v for v in trajectory["verdicts"] if v["label"] == "FirstInOrder"]
        assert grouped["judgment"]["feedback"] == f"judged in a group of {settings.group_size}"
    assert len(groups) == settings.tasks_per_round
    assert all(scores == [1.0] * settings.group_size for scores in groups.values())
    heldout = [json.loads(line) for line in (tmp_path / HELDOUT).open()]
    assert {v["judgment"]["feedback"] for t in heldout for v in t["verdicts"] if v["label"] == "FirstInOrder"} == {
        "judged in a group of 1"
    }
