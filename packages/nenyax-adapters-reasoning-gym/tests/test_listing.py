"""The adapter's optional `listing()`, what `nenyax list reasoning_gym` prints."""

from reasoning_gym.factory import DATASETS

from nenyax.adapters.reasoning_gym.adapter import ReasoningGymAdapter
from nenyax.core import load


def test_listing_names_every_dataset_with_its_own_docstring_and_each_loads():
    items = ReasoningGymAdapter().listing()
    assert [i.uri for i in items] == [f"reasoning_gym:{n}" for n in sorted(set(DATASETS) - {"composite"})]
    described = {i.uri: i.description for i in items}
    assert (
        described["reasoning_gym:basic_arithmetic"] == DATASETS["basic_arithmetic"][0].__doc__.strip().splitlines()[0]
    )
    assert load(f"{items[0].uri}?size=2").task_ids()  # a listed URI loads


def test_where_filters_by_name():
    assert [i.uri for i in ReasoningGymAdapter().listing("basic_arith")] == ["reasoning_gym:basic_arithmetic"]
