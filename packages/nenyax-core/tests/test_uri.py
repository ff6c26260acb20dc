import pytest

from nenyax.core.contract.uri import parse_uri
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
        ("Bad:x", "is not an environment URI"),
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
