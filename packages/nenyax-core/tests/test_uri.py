import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nenyax.core.contract import serde
from nenyax.core.contract.manifest import Manifest, Mode, Split
from nenyax.core.contract.uri import format_uri, format_value, parse_uri
from nenyax.core.errors import BadURIError


def test_parses_scheme_target_and_typed_params():
    uri = parse_uri("reasoning_gym:chain_sum?size=50&seed=7&ratio=0.5&flag=true&ops=[%22%2B%22]&name=x")
    assert (uri.format, uri.target) == ("reasoning_gym", "chain_sum")
    assert uri.params == {"size": 50, "seed": 7, "ratio": 0.5, "flag": True, "ops": ["+"], "name": "x"}


def test_target_may_hold_colons():
    assert parse_uri("gymnasium:my.module:MyEnv").target == "my.module:MyEnv"


@pytest.mark.parametrize(
    ("uri", "fragment"),
    [
        ("", "non-empty"),
        ("no_scheme", "is not an environment URI"),
        ("1bad:x", "is not an environment URI"),
        ("fmt:", "names no environment"),
        ("fmt:x?a=1&a=2", "sets 'a' twice"),
        ("fmt:x?novalue", "malformed"),
    ],
)
def test_bad_uris_get_one_sentence(uri, fragment):
    with pytest.raises(BadURIError, match=fragment) as info:
        parse_uri(uri)
    assert "\n" not in str(info.value)
    assert info.value.exit_code == 2


def test_plus_is_a_plus_and_a_space_is_percent_20():
    assert parse_uri("fmt:x?expr=1+2&name=a%20b&amp=a%26b%3Dc").params == {"expr": "1+2", "name": "a b", "amp": "a&b=c"}


def test_tuples_lists_and_quoted_strings():
    uri = parse_uri('fmt:x?t=(1,2)&one=("a",)&empty=()&l=[1,[2]]&s="true"&n="42"&u=1_000')
    assert uri.params == {"t": (1, 2), "one": ("a",), "empty": (), "l": [1, [2]], "s": "true", "n": "42", "u": "1_000"}


def test_the_wrong_case_of_a_format_reaches_the_loader():
    assert parse_uri("Gymnasium:CartPole-v1").format == "Gymnasium"  # the loader then says "did you mean"


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
_value = _json | st.tuples(_json) | st.tuples(_json, _json) | st.just(())


@given(
    params=st.dictionaries(st.text(min_size=1), _value, max_size=4),
    target=st.from_regex(r"[A-Za-z0-9_./:-]{1,20}", fullmatch=True),
)
def test_every_value_type_round_trips_through_the_uri_and_the_manifest(params, target):
    uri = format_uri("fmt", target, params)
    manifest = Manifest(
        uri=uri,
        format="fmt",
        format_version="1",
        mode=Mode.STEP,
        name="x",
        splits=(Split(name="all", count=1),),
        observation="o",
        action="a",
        score_range=(0.0, 1.0),
    )
    back = serde.from_data(serde.to_data(manifest), Manifest)
    parsed = parse_uri(back.uri)
    assert parsed.target == target
    assert parsed.params == params
    assert {k: type(v) for k, v in parsed.params.items()} == {k: type(v) for k, v in params.items()}


@pytest.mark.parametrize("value", [math.inf, -math.inf, 1e300, -0.0, 1.0, 3])
def test_numbers_keep_their_type(value):
    assert type(parse_uri(format_uri("f", "x", {"v": value})).params["v"]) is type(value)


def test_an_unwritable_value_is_one_sentence():
    with pytest.raises(BadURIError, match="not set"):
        format_value({1, 2})
