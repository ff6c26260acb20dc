"""The fast path for steps' free-form fields gives exactly what cattrs' element-by-element walk gives."""

import pytest
from cattrs.preconf.orjson import make_converter

from nenyax.core.contract import serde
from nenyax.core.contract.trajectory import PolicyInfo, Step

# An independent route to the expected data: a stock cattrs converter of the same preset, which walks
# every element and knows nothing of serde's fast path.
STOCK = make_converter(forbid_extra_keys=True)


@pytest.mark.parametrize(
    "step",
    [
        Step(observation=[0.5, [1, 2], {"a": None}], action=3, reward=1.0, info={"k": "v"}),
        Step(observation="text", action="answer", terminated=True, text="reply"),
        Step(observation=(1, 2), action={"a": (1,)}, info={"x": {1, 2}}),  # tuples and a set: cattrs' path
        Step(observation=[1], action=2, info={"who": PolicyInfo(kind="x")}),  # an attrs object: cattrs' path
        Step(observation=[True, None], action=[], info={"n": 2**40}),
    ],
)
def test_fast_path_matches_cattrs(step):
    slow = STOCK.unstructure(step)
    assert serde.canonical_json(serde.to_data(step)) == serde.canonical_json(slow)
    assert serde.loads(serde.dumps(step), Step) == serde.loads(serde.canonical_json(slow), Step)


def test_plain_steps_are_not_walked_element_by_element():
    image = [[[0] * 3] * 96] * 96
    data = serde.to_data(Step(observation=image, action=1))
    assert data["observation"] is image  # passed through, not copied
