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


# Every shape the grammar reads, as text a user types: JSON with NaN and big integers, and tuples of it.
_grammar_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**64, max_value=10**40)
    | st.integers(min_value=-(10**40), max_value=-(2**63) - 1)
    | st.floats()
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
_grammar_value = _grammar_json | st.tuples(_grammar_json) | st.tuples(_grammar_json, _grammar_json) | st.just(())


def _manifest_of(uri: str, extra: dict) -> Manifest:
    return Manifest(uri=uri, format="fmt", format_version="1", mode=Mode.STEP, name="x", extra=extra)


@given(params=st.dictionaries(st.text(min_size=1), _grammar_value, max_size=4))
def test_every_value_the_grammar_reads_survives_a_manifests_json_round_trip(params):
    # What adapters do: record the parsed parameters (a tuple among them) in the manifest's extra.
    uri = format_uri("fmt", "x", params)
    parsed = parse_uri(uri).params
    manifest = _manifest_of(uri, {"config": parsed, "nested": {"again": [parsed, tuple(parsed.values())]}})
    assert serde.loads(serde.dumps(manifest), Manifest) == manifest
    assert serde.digest(serde.loads(serde.dumps(manifest), Manifest)) == serde.digest(manifest)


@pytest.mark.parametrize(
    ("text", "recorded"),
    [
        ('["+","-"]', ["+", "-"]),
        ('("+","-")', ["+", "-"]),
        ("(1,)", [1]),
        ("()", []),
        ("[[1,2],(3)]", "[[1,2],(3)]"),  # not JSON: the string itself
        ('{"k":[1,[2,3]]}', {"k": [1, [2, 3]]}),
        ("nan", "nan"),
        ("-inf", "-inf"),
        ("[NaN,Infinity]", ["nan", "inf"]),
        ("123456789012345678901234567890", "123456789012345678901234567890"),
        ("[18446744073709551615,-9223372036854775808]", [2**64 - 1, -(2**63)]),
        ("null", None),
    ],
)
def test_the_manifest_holds_a_value_as_json_reads_it_back(text, recorded):
    manifest = _manifest_of("fmt:x", {"v": parse_uri(f"fmt:x?v={text}").params["v"]})
    assert manifest.extra == {"v": recorded}
    assert serde.loads(serde.dumps(manifest), Manifest) == manifest


def test_the_manifest_holds_keys_and_containers_as_json_reads_them_back():
    import enum

    class Color(enum.Enum):
        RED = "red"

    manifest = Manifest(
        uri="fmt:x",
        format="fmt",
        format_version="1",
        mode=Mode.STEP,
        name="x",
        splits=[Split(name="all", count=1)],
        tools=["a"],
        score_range=(0, 1),
        extra={"keys": {2: "two", None: "none", True: "yes", 1.5: "f"}, "set": {3}, "enum": Color.RED},
    )
    assert manifest.extra == {
        "keys": {"2": "two", "null": "none", "true": "yes", "1.5": "f"},
        "set": [3],
        "enum": "red",
    }
    assert (manifest.splits, manifest.tools, manifest.score_range) == (
        (Split(name="all", count=1),),
        ("a",),
        (0.0, 1.0),
    )
    assert serde.loads(serde.dumps(manifest), Manifest) == manifest


def test_an_object_with_no_json_form_is_refused_when_the_manifest_is_made():
    from nenyax.core.errors import ManifestError

    with pytest.raises(ManifestError, match=r"extra must hold JSON data; object has no JSON form\.$"):
        _manifest_of("fmt:x", {"v": object()})


@pytest.mark.parametrize("uri", ['fmt:x?v="\\ud800"', 'fmt:x?v=["a","\\udfff"]', "fmt:x?v=\udcff", "fmt:\udcff"])
def test_text_that_is_not_unicode_is_one_sentence(uri):
    with pytest.raises(BadURIError, match=r"holds text that is not valid Unicode\.$"):
        parse_uri(uri)
