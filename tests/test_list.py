"""`nenyax list` on the real adapters: what reasoning-gym registers, Gymnasium's registry, a folder's files."""

import json
import os
import re
import subprocess
import sys

import gymnasium as gym
from reasoning_gym.factory import DATASETS


def nenyax(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "nenyax.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=300,
        check=False,
    )


def test_reasoning_gym_lists_every_dataset_with_its_docstring():
    done = nenyax("list", "reasoning_gym", "--json")
    assert done.returncode == 0, done.stderr
    items = json.loads(done.stdout)["reasoning_gym"]
    assert [i["uri"] for i in items] == [f"reasoning_gym:{n}" for n in sorted(set(DATASETS) - {"composite"})]
    described = {i["uri"]: i["description"] for i in items}
    assert described["reasoning_gym:basic_arithmetic"].startswith("Dataset that generates basic arithmetic tasks")
    text = nenyax("list", "reasoning_gym", "arith")
    assert "reasoning_gym:basic_arithmetic" in text.stdout
    assert "reasoning_gym:ab " not in text.stdout


def test_gymnasium_lists_the_registry_and_what_an_imported_module_registers(tmp_path):
    (tmp_path / "nenyax_list_envs.py").write_text(
        "import gymnasium\n"
        "gymnasium.register('NenyaxListed-v0', entry_point='gymnasium.envs.classic_control.cartpole:CartPoleEnv')\n"
    )
    done = nenyax("list", "gymnasium", "--json", "--import", "nenyax_list_envs", env={"PYTHONPATH": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    items = {i["uri"]: i["description"] for i in json.loads(done.stdout)["gymnasium"]}
    # gymnasium's own ids bare; the one the imported module registered under that module, the URI that loads.
    own = {e for e, spec in gym.registry.items() if str(spec.entry_point).startswith("gymnasium")}
    assert set(items) >= {f"gymnasium:{e}" for e in own} | {"gymnasium:nenyax_list_envs:NenyaxListed-v0"}
    assert "gymnasium:NenyaxListed-v0" not in items
    assert items["gymnasium:CartPole-v1"] == "gymnasium.envs.classic_control.cartpole:CartPoleEnv"
    missing = nenyax("list", "gymnasium", "--import", "no_such_module_here")
    assert missing.returncode == 2
    assert "no_such_module_here" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_hf_lists_the_dataset_files_of_a_folder(tmp_path):
    (tmp_path / "a.jsonl").write_text('{"question": "1+1?", "answer": "2"}\n')
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.csv").write_text("question,answer\n1+2?,3\n")
    (tmp_path / "notes.txt").write_text("not a dataset")
    saved = tmp_path / "saved"
    saved.mkdir()
    (saved / "state.json").write_text("{}")
    (saved / "dataset_info.json").write_text("{}")
    done = nenyax("list", "hf", str(tmp_path), "--json")
    assert done.returncode == 0, done.stderr
    uris = [i["uri"] for i in json.loads(done.stdout)["hf"]]
    # the save_to_disk folder is one dataset (its .json files are not listed), the .txt is none
    assert uris == [f"hf:{tmp_path / 'a.jsonl'}", f"hf:{saved}", f"hf:{tmp_path / 'sub' / 'b.csv'}"]
    gone = nenyax("list", "hf", str(tmp_path / "nowhere"))
    assert gone.returncode == 2
    assert "No file or directory" in gone.stderr


def test_list_without_an_adapter_names_every_installed_one_and_an_unknown_one_is_a_suggestion():
    done = nenyax("list")
    assert done.returncode == 0, done.stderr
    assert "reasoning_gym: " in done.stdout
    assert "gymnasium: " in done.stdout
    wrong = nenyax("list", "reasoning_gm")
    assert wrong.returncode == 2
    assert "Did you mean 'reasoning_gym'" in wrong.stderr


def test_list_shows_the_tier_check_last_measured_and_marks_one_from_other_versions(tmp_path):
    cache = {"NENYAX_CHECKS_DIR": str(tmp_path)}
    checked = nenyax("check", "reasoning_gym:basic_arithmetic", "--json", env=cache)  # default strictness: kept
    assert checked.returncode == 0, checked.stderr
    tier = json.loads(checked.stdout)["tier"]
    listed = nenyax("list", "reasoning_gym", "arith", "--json", env=cache)
    [item] = [i for i in json.loads(listed.stdout)["reasoning_gym"] if i["uri"] == "reasoning_gym:basic_arithmetic"]
    assert item["tier"] == tier
    assert item["stale_tier"] is None
    assert item["checked"]
    text = nenyax("list", "reasoning_gym", "arith", env=cache).stdout
    assert re.search(rf"reasoning_gym:basic_arithmetic +\[{tier}\] +Dataset", text), text
    # Measured by other code, it is no evidence about this code: shown as stale, not as the tier.
    [record] = tmp_path.iterdir()
    data = json.loads(record.read_text())
    record.write_text(json.dumps({**data, "versions": {"nenyax-core": "0.0.0"}}))
    [item] = [
        i
        for i in json.loads(nenyax("list", "reasoning_gym", "basic_arith", "--json", env=cache).stdout)["reasoning_gym"]
    ]
    assert item["tier"] is None
    assert item["stale_tier"] == tier
    assert f"[{tier}?]" in nenyax("list", "reasoning_gym", "basic_arith", env=cache).stdout
    untouched = nenyax("list", "reasoning_gym", "leg_counting", "--json", env=cache)
    assert [i["tier"] for i in json.loads(untouched.stdout)["reasoning_gym"]] == [None]


def test_gymnasium_marks_the_ids_it_keeps_only_to_say_they_moved():
    done = nenyax("list", "gymnasium", "--json")
    assert done.returncode == 0, done.stderr
    items = {i["uri"]: i for i in json.loads(done.stdout)["gymnasium"]}
    assert "gymnasium-robotics" in items["gymnasium:Ant-v2"]["unavailable"]
    assert items["gymnasium:CartPole-v1"]["unavailable"] is None
    text = nenyax("list", "gymnasium", "Ant").stdout
    assert re.search(r"gymnasium: \d+ environment\(s\), \d+ of which cannot load here", text)
    [ant] = [line for line in text.splitlines() if "gymnasium:Ant-v2 " in line]
    assert "cannot load: The mujoco v2 and v3 based environments have been moved" in ant
    assert text.splitlines()[1].split() == ["uri", "description"]
