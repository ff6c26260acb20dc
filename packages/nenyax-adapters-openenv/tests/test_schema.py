"""The action schema and text codec on real pydantic schemas, as OpenEnv's /schema serves them."""

import json
import random
import re
from typing import Literal

import pytest
from guess_env import GuessAction, GuessObservation
from openenv.core.env_server.types import Action
from pydantic import BaseModel, Field

from nenyax.adapters.openenv import codec
from nenyax.adapters.openenv.environment import _policy_support
from nenyax.adapters.openenv.instances import Unbuildable
from nenyax.adapters.openenv.schema import ActionSchema
from nenyax.core import PolicyFailure


class Move(BaseModel):
    dx: int = Field(ge=-1, le=1)
    dy: int = Field(ge=-1, le=1)


class RichAction(Action):
    """Every construct pydantic emits for an action."""

    verb: Literal["go", "wait", "look"]
    moves: list[Move] = Field(min_length=1, max_length=4)
    speed: float = Field(gt=0, lt=2.5, description="How fast")
    note: str | None = None
    name: str = Field(min_length=3, max_length=5)
    flag: bool = False


@pytest.fixture
def guess():
    return ActionSchema(GuessAction.model_json_schema())


@pytest.fixture
def rich():
    return ActionSchema(RichAction.model_json_schema())


def test_fields_leave_out_the_inherited_metadata(guess, rich):
    assert list(guess.fields) == ["guess"]
    assert guess.required == ("guess",)
    assert set(rich.fields) == {"verb", "moves", "speed", "note", "name", "flag"}


def test_null_and_random_instances_fit_the_schema_and_pydantic_agrees(rich):
    null = rich.null_instance()
    assert rich.problems(null) == []
    assert RichAction.model_validate(null)
    assert null["verb"] == "go"
    assert len(null["moves"]) == 1
    assert null["moves"][0] == {"dx": -1, "dy": -1}
    rng = random.Random(3)
    for _ in range(50):
        drawn = rich.random_instance(rng)
        assert rich.problems(drawn) == [], drawn
        RichAction.model_validate(drawn)
    assert rich.random_instance(random.Random(7)) == rich.random_instance(random.Random(7))


def test_problems_name_the_field_and_the_rule(guess):
    assert guess.problems({"guess": 500}) == ["guess: 500 is greater than the maximum of 100"]
    assert guess.problems({"guess": 5, "bogus": 1}) == [
        "Additional properties are not allowed ('bogus' was unexpected)"
    ]
    with pytest.raises(
        PolicyFailure,
        match=r"The action \{\"guess\": \"x\"\} does not fit the server's action schema: guess: 'x' is not of type 'integer'\.",
    ):
        guess.check({"guess": "x"})


def test_describe(guess, rich):
    assert (
        guess.describe()
        == 'a JSON object with "guess" (integer from 1 to 100, required): Your guess, an integer from 1 to 100'
    )
    text = rich.describe()
    assert '"verb" (one of "go", "wait", "look", required)' in text
    assert '"speed" (number from 1e-09 to 2.5, required): How fast' in text
    assert '"note" (string or null, optional)' in text


def test_prompt_names_the_observation_fields_and_an_example(guess):
    prompt = codec.system_prompt("guess", "Guess it.", GuessObservation.model_json_schema(), guess)
    assert "OpenEnv environment guess. Guess it." in prompt
    assert '"tries_left" (integer): Guesses left' in prompt
    assert '"metadata"' not in prompt
    assert '"reward"' not in prompt
    assert 'For example: <action>{"guess": 1}</action> (the bare value, e.g. <action>1</action>, also works)' in prompt


@pytest.mark.parametrize(
    ("reply", "action"),
    [
        ('<action>{"guess": 42}</action>', {"guess": 42}),
        ("I think <action>42</action>", {"guess": 42}),
        ('```json\n{"guess": 7}\n```', {"guess": 7}),
        ('Let me see... my answer: {"guess": 9}', {"guess": 9}),
        ("<action>1</action> then <ACTION>64</ACTION>", {"guess": 64}),
    ],
)
def test_parse_reads_the_action(guess, reply, action):
    assert codec.parse(guess, reply) == action


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        ("higher, I think", "no JSON action was found"),
        (
            "<action>500</action>",
            "'500' does not fit the action schema (guess: 500 is greater than the maximum of 100)",
        ),
        ("<action>fifty</action>", "'fifty' is not JSON"),
        (
            '<action>"fifty"</action>',
            "'\"fifty\"' does not fit the action schema (guess: 'fifty' is not of type 'integer')",
        ),
    ],
)
def test_parse_failures_say_what_is_wrong(guess, reply, words):
    with pytest.raises(PolicyFailure) as caught:
        codec.parse(guess, reply)
    text = str(caught.value)
    assert text.startswith("Could not read an action from the reply: ")
    assert words in text
    assert text.endswith(
        'expected a JSON object with "guess" (integer from 1 to 100, required): Your guess, an integer from 1 to 100 inside <action></action>.'
    )


def test_plain_text_is_the_action_of_a_single_text_field():
    class Say(Action):
        message: str

    assert codec.parse(ActionSchema(Say.model_json_schema()), "<action>hello there</action>") == {
        "message": "hello there"
    }


def test_a_broken_schema_is_refused():
    with pytest.raises(ValueError, match="not valid JSON Schema"):
        ActionSchema({"type": "object", "properties": {"x": {"type": "nonsense"}}})


# ---- schema shapes beyond pydantic's: what hand-written servers and `nenyax serve` publish

ONE_OF_REQUIRED_SETS = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "metadata": {"type": "object"},
        "action": {"type": "integer", "minimum": 0, "maximum": 1},
        "message": {"type": "string"},
    },
    "oneOf": [{"required": ["action"]}, {"required": ["message"]}],
}
UNION_OF_MODELS = {
    "$defs": {
        "Native": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "action": {
                    "type": "array",
                    "prefixItems": [
                        {"type": "number", "minimum": -1, "maximum": 1},
                        {"type": "number", "exclusiveMinimum": 0, "maximum": 5},
                    ],
                    "minItems": 2,
                    "maxItems": 2,
                }
            },
            "required": ["action"],
        },
        "Text": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"message": {"type": "string"}},
            "required": ["message"],
        },
    },
    "anyOf": [{"$ref": "#/$defs/Native"}, {"$ref": "#/$defs/Text"}],
}
ALL_OF_AND_MULTIPLES = {
    "type": "object",
    "allOf": [
        {"properties": {"kind": {"enum": ["up", "down"]}}, "required": ["kind"]},
        {"properties": {"n": {"type": "integer", "exclusiveMinimum": 3, "multipleOf": 5}}, "required": ["n"]},
        {"properties": {"tags": {"type": "array", "items": {"enum": [1, 2]}, "minItems": 2}}, "required": ["tags"]},
    ],
}
TYPE_LIST = {
    "type": "object",
    "properties": {"x": {"type": ["integer", "null"], "minimum": 2, "maximum": 4}},
    "required": ["x"],
}


@pytest.mark.parametrize(
    ("schema", "null"),
    [
        (ONE_OF_REQUIRED_SETS, {"action": 0}),
        (UNION_OF_MODELS, {"action": [-1, 1e-09]}),
        (ALL_OF_AND_MULTIPLES, {"kind": "up", "n": 5, "tags": [1, 1]}),
        (TYPE_LIST, {"x": 2}),
    ],
    ids=["oneOf of required sets", "anyOf of whole models", "allOf, multipleOf, enums", "type list"],
)
def test_null_and_random_actions_are_built_from_every_schema_shape(schema, null):
    action = ActionSchema(schema)
    assert action.null_instance() == null
    assert action.problems(null) == []
    rng = random.Random(1)
    drawn = [action.random_instance(rng) for _ in range(40)]
    assert all(action.problems(d) == [] for d in drawn), [d for d in drawn if action.problems(d)]
    assert len({json.dumps(d, sort_keys=True) for d in drawn}) > 1  # random, not the null action again


def test_alternatives_are_described_with_their_fields():
    assert ActionSchema(ONE_OF_REQUIRED_SETS).describe() == (
        'a JSON object with "action" (integer from 0 to 1, one of the alternatives); '
        '"message" (string, one of the alternatives) (send "action" or "message", as the schema\'s oneOf asks)'
    )
    assert list(ActionSchema(UNION_OF_MODELS).fields) == ["action", "message"]


@pytest.mark.parametrize(
    ("field", "reason"),
    [
        ({"type": "string", "pattern": "^[A-H][1-8]$"}, "a string must match the pattern '^[A-H][1-8]$'"),
        ({"type": "integer", "minimum": 5, "maximum": 2}, "an integer must be at least 5 and at most 2"),
        ({"type": "integer", "minimum": 1, "maximum": 4, "multipleOf": 5}, "a multiple of 5 between 1 and 4"),
        ({"not": {}}, "does not fit"),
    ],
    ids=["pattern", "empty range", "no multiple in range", "not"],
)
def test_a_schema_nenyax_cannot_build_from_is_said_in_one_sentence(field, reason):
    schema = {"type": "object", "properties": {"square": field}, "required": ["square"]}
    with pytest.raises(Unbuildable, match=re.escape(reason)):
        ActionSchema(schema).null_instance()
    null, rand = _policy_support(_Info(ActionSchema(schema)))
    assert null.startswith("Nenyax cannot build a null action from the server's action schema: ")
    assert rand.startswith("Nenyax cannot draw a random action from the server's action schema: ")
    for sentence in (null, rand):
        assert sentence.count(". ") == 0
        assert sentence.endswith("policy.")


class _Info:
    """What `_policy_support` reads of a server: its action schema alone."""

    def __init__(self, action: ActionSchema) -> None:
        self.action = action
