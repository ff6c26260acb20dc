"""The adapter's optional `listing()`, what `nenyax list gymnasium` prints."""

import gymnasium as gym

from nenyax.adapters.gymnasium.adapter import GymnasiumAdapter
from nenyax.core import load


def test_listing_is_the_registry_with_entry_points():
    items = {i.uri: i.description for i in GymnasiumAdapter().listing()}
    assert len(items) == len(gym.registry)  # one line per registered id
    # Ids gymnasium registers itself are named by the id alone, namespaced ones included.
    assert items["gymnasium:FrozenLake-v1"] == "gymnasium.envs.toy_text.frozen_lake:FrozenLakeEnv"
    assert items["gymnasium:CartPole-v1"] == "gymnasium.envs.classic_control.cartpole:CartPoleEnv"
    assert items["gymnasium:phys2d/CartPole-v1"].startswith("gymnasium.envs.phys2d.cartpole:")
    assert "gymnasium:tabular/Blackjack-v0" in items
    assert "gymnasium:Taxi-v4" in items
    assert all(":" in d for d in items.values())  # a factory function is named by module:qualname, not a repr


def test_where_filters_by_id():
    found = [i.uri for i in GymnasiumAdapter().listing("cartpole")]
    assert found == [
        "gymnasium:CartPole-v0",
        "gymnasium:CartPole-v1",
        "gymnasium:phys2d/CartPole-v0",
        "gymnasium:phys2d/CartPole-v1",
    ]


def test_an_id_another_package_registers_is_listed_under_that_package_and_that_uri_loads():
    import minigrid  # noqa: F401 - registers the MiniGrid ids, as `nenyax list --import minigrid` does

    [item] = GymnasiumAdapter().listing("MiniGrid-Empty-5x5")
    # The bare id would not load in a new process: only importing minigrid registers it.
    assert item.uri == "gymnasium:minigrid:MiniGrid-Empty-5x5-v0"
    env = load(item.uri)
    try:
        assert env.manifest.uri == item.uri  # the key `nenyax check` caches its tier under, which list reads
    finally:
        env.close()


def test_an_id_an_imported_module_registers_is_listed_under_that_module(tmp_path, monkeypatch):
    # A module registering an id for gymnasium's own class: only the module can make a new process know it.
    (tmp_path / "nenyax_registers_one.py").write_text(
        "import gymnasium\n"
        "gymnasium.register('NenyaxRegistered-v0', entry_point='gymnasium.envs.classic_control.cartpole:CartPoleEnv')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    [item] = GymnasiumAdapter().listing("NenyaxRegistered", imports=("nenyax_registers_one",))
    assert item.uri == "gymnasium:nenyax_registers_one:NenyaxRegistered-v0"
    env = load(item.uri)
    env.close()
    gym.registry.pop("NenyaxRegistered-v0")


def test_an_id_whose_module_does_not_import_here_is_marked_with_why():
    """`gymnasium.make` imports the entry point's module first; listing says when that would fail (MuJoCo, Box2D or
    JAX missing), and the ids whose module imports stay unmarked."""
    gym.register(id="NenyaxMissingDependency-v0", entry_point="nenyax_module_not_installed_here.envs:Env")
    try:
        items = {i.uri: i for i in GymnasiumAdapter().listing("NenyaxMissingDependency")}
        marked = items["gymnasium:nenyax_module_not_installed_here:NenyaxMissingDependency-v0"].unavailable
        assert marked is not None
        assert "nenyax_module_not_installed_here" in marked
    finally:
        del gym.registry["NenyaxMissingDependency-v0"]
    cartpole = next(iter(GymnasiumAdapter().listing("CartPole-v1")))
    assert cartpole.unavailable is None
