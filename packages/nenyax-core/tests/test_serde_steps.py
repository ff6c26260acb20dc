"""The fast path for steps' free-form fields gives exactly what cattrs' element-by-element walk gives."""

import attrs
import numpy as np
import pytest
from cattrs.gen import make_dict_unstructure_fn, override
from cattrs.preconf.orjson import make_converter

from nenyax.core.contract import serde
from nenyax.core.contract.schema import Record
from nenyax.core.contract.trajectory import PolicyInfo, Step

# An independent route to the expected data: a stock cattrs converter of the same preset, which walks
# every element and knows nothing of serde's fast path.
STOCK = make_converter(forbid_extra_keys=True)
# ... but for `unknown_fields`, serde's slot for a newer version's fields (written back in their place, not as a key).
STOCK.register_unstructure_hook_factory(
    lambda cls: attrs.has(cls) and issubclass(cls, Record),
    lambda cls: make_dict_unstructure_fn(cls, STOCK, unknown_fields=override(omit=True)),
)


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


def test_a_step_s_unknown_fields_are_written_back_on_either_path():
    # A newer minor version's step fields, read by this one, are written again whichever path the step takes.
    plain = Step(observation=[1], action=2, unknown_fields={"latency_s": 0.5})
    walked = Step(observation=np.zeros(2, dtype=np.float32), action=2, unknown_fields={"latency_s": 0.5})
    assert serde.to_data(plain)["latency_s"] == 0.5 == serde.to_data(walked)["latency_s"]
    assert serde.loads(serde.dumps(walked), Step).unknown_fields == {"latency_s": 0.5}


def test_a_numpy_observation_takes_the_walked_path_and_is_encoded():
    data = serde.to_data(Step(observation=np.arange(3, dtype=np.int16), action=np.float32(0.5)))
    assert data["observation"] == {"__ndarray__": "int16", "values": [0, 1, 2]}
    assert serde.loads(serde.dumps(data), Step).action == 0.5  # numpy scalars are written as numbers
