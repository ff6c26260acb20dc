"""The adapter's optional `listing()`, what `nenyax list gymnasium` prints."""

import gymnasium as gym

from nenyax.adapters.gymnasium.adapter import GymnasiumAdapter


def test_listing_is_the_registry_with_entry_points():
    items = {i.uri: i.description for i in GymnasiumAdapter().listing()}
    assert set(items) == {f"gymnasium:{e}" for e in gym.registry}
    assert items["gymnasium:FrozenLake-v1"] == "gymnasium.envs.toy_text.frozen_lake:FrozenLakeEnv"
    assert all(":" in d for d in items.values())  # a factory function is named by module:qualname, not a repr


def test_where_filters_by_id():
    found = [i.uri for i in GymnasiumAdapter().listing("cartpole")]
    assert found == sorted(f"gymnasium:{e}" for e in gym.registry if "cartpole" in e.lower())
    assert "gymnasium:CartPole-v1" in found and "gymnasium:FrozenLake-v1" not in found
