"""The adapter's optional `listing()`, what `nenyax list gymnasium` prints."""

import gymnasium as gym

from nenyax.adapters.gymnasium.adapter import GymnasiumAdapter
from nenyax.core import load


def test_listing_is_the_registry_with_entry_points():
    items = {i.uri: i.description for i in GymnasiumAdapter().listing()}
    assert {uri.rsplit(":", 1)[1] for uri in items} == set(gym.registry)
    assert items["gymnasium:FrozenLake-v1"] == "gymnasium.envs.toy_text.frozen_lake:FrozenLakeEnv"
    assert all(":" in d for d in items.values())  # a factory function is named by module:qualname, not a repr


def test_where_filters_by_id():
    found = [i.uri for i in GymnasiumAdapter().listing("cartpole")]
    assert [uri.rsplit(":", 1)[1] for uri in found] == sorted(e for e in gym.registry if "cartpole" in e.lower())
    assert "gymnasium:CartPole-v1" in found and "gymnasium:FrozenLake-v1" not in found


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
