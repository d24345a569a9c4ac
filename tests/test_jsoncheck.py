"""The schemas' fast test (``jsoncheck.compile_schema``) against jsonschema: it never
passes what jsonschema refuses, it passes the bundled inputs without jsonschema, and a
sweep never imports jsonschema."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from kda_sim.jsoncheck import Schema, compile_schema
from kda_sim.kernels.registry import get
from kda_sim.machine.costs import COSTS_SCHEMA, costs_dir
from kda_sim.machine.profile import PROFILE_SCHEMA, gpu_names

OBJ = {
    "type": "object",
    "required": ["a"],
    "additionalProperties": False,
    "properties": {
        "a": {"type": "integer", "minimum": 0},
        "m": {"type": "object", "additionalProperties": {"type": "number", "maximum": 1}},
        "p": {
            "type": "array",
            "prefixItems": [{"type": "number"}, {"type": "string"}],
            "minItems": 1,
            "maxItems": 3,
        },
    },
}
CASES: list[Any] = [
    {"a": 1},
    {"a": 1, "b": 2},  # an unknown field
    {"a": -1},
    {"a": 1, "m": {"x": 0.5, "y": 1}},
    {"a": 1, "m": {"x": 0.5, "y": 2}},  # a value of the map out of range
    {"a": 1, "m": {"x": "s"}},
    {"a": 1, "p": [1.5]},  # shorter than the prefix: holds
    {"a": 1, "p": [1.5, "s", True]},  # an item past the prefix: any
    {"a": 1, "p": ["s", 1.5]},  # the prefix's types swapped
    {"a": 1, "p": []},
    {"a": 1, "p": [1, "s", 2, 3]},
    [],
    "a",
]


@pytest.mark.parametrize("data", CASES)
def test_the_fast_test_passes_exactly_what_jsonschema_does_here(data: Any) -> None:
    assert compile_schema(OBJ)(data) == Draft202012Validator(OBJ).is_valid(data)


def _when(cat: Any, then: dict[str, Any]) -> dict[str, Any]:
    return {"if": {"properties": {"cat": {"const": cat}}, "required": ["cat"]}, "then": then}


# an allOf of conditionals on one key's constant (a timeline's events by "cat"): the fast
# test looks the key up (jsoncheck._switch) instead of trying every "if"
SWITCH = {
    "allOf": [
        _when("a", {"required": ["x"], "properties": {"x": {"type": "integer"}}}),
        _when("b", {"properties": {"x": {"type": "string"}}}),
    ]
}
# the same with a member of another form: the members are tried one by one, as before
NO_SWITCH = {"allOf": [*SWITCH["allOf"], {"properties": {"x": {"minimum": 0}}}]}
SWITCH_CASES: list[Any] = [
    {"cat": "a", "x": 1},
    {"cat": "a"},  # the "a" case's required field missing
    {"cat": "a", "x": "s"},
    {"cat": "b", "x": "s"},
    {"cat": "b", "x": 1},
    {"cat": "c", "x": 1},  # no case: holds
    {"x": 1},  # no "cat": no "if" holds
    {"cat": 1, "x": "s"},  # a constant's value of another type: no "if" holds
    {"cat": ["a"], "x": "s"},  # an unhashable value
    {"cat": None},
    {"cat": "a", "x": -1},
    [],  # not an object: every "if" holds, every "then" too
    "a",
]


@pytest.mark.parametrize("schema", [SWITCH, NO_SWITCH])
@pytest.mark.parametrize("data", SWITCH_CASES)
def test_the_fast_test_of_a_switch_on_a_constant_is_jsonschema_s(
    schema: dict[str, Any], data: Any
) -> None:
    assert compile_schema(schema)(data) == Draft202012Validator(schema).is_valid(data)


def test_a_keyword_it_does_not_know_leaves_the_answer_to_jsonschema() -> None:
    schema = {"type": "object", "patternProperties": {"^x": {}}, "additionalProperties": False}
    assert not compile_schema(schema)({"x1": 1})  # refused here ...
    s = Schema(schema)
    assert s.first_error({"x1": 1}) is None  # ... and passed by jsonschema
    assert s.first_error({"y": 1}) is not None


def _bundled_costs() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for f in costs_dir(get("k1")).iterdir():
        if f.name.endswith(".json"):
            out.append((f.name, json.loads(f.read_text())))
    return out


def test_every_bundled_profile_and_costs_file_passes_the_fast_test() -> None:
    # were one refused, jsonschema would be imported to pass it: correct, but slow
    from importlib import resources

    profiles = resources.files("kda_sim.machine") / "profiles"
    for name in gpu_names():
        d = json.loads((profiles / f"{name}.json").read_text())
        assert compile_schema(PROFILE_SCHEMA)(d), name
    files = _bundled_costs()
    assert files
    for name, d in files:
        assert compile_schema(COSTS_SCHEMA)(d), name


def test_a_broken_costs_file_fails_the_fast_test_as_jsonschema() -> None:
    name, d = _bundled_costs()[0]
    key = next(iter(d["costs"]))
    for edit in (
        lambda x: x.update(extra=1),
        lambda x: x["costs"].__setitem__(key, [1.0]),
        lambda x: x["costs"].__setitem__(key, [-1.0, 0.0]),
        lambda x: x["costs"].__setitem__(key, [1.0, 2e9]),
        lambda x: x.update(kernel="../k1.py"),
    ):
        bad = copy.deepcopy(d)
        edit(bad)
        assert not compile_schema(COSTS_SCHEMA)(bad), name
        assert not Draft202012Validator(COSTS_SCHEMA).is_valid(bad), name


def test_a_bundled_profile_with_its_costs_imports_no_jsonschema(fresh_python) -> None:
    # what every command loads before its work (a sweep: before its fork)
    code = (
        "import sys\nfrom kda_sim.machine.profile import load_profile\n"
        "load_profile('h200', kernel='k1')\nprint('jsonschema' in sys.modules)"
    )
    assert fresh_python(code) == "False"


def test_every_schema_of_the_product_is_a_valid_schema() -> None:
    # a Schema checks its schema only when it first explains a refusal: a broken one must
    # fail here, not in a user's refused input
    from kda_sim.machine import costs, profile
    from kda_sim.timeline import schema as timeline_schema

    found = [costs._SCHEMA, profile._SCHEMA, profile.COSTS_MAP, timeline_schema._SCHEMA]
    for s in found:
        Draft202012Validator.check_schema(s.schema)  # raises SchemaError for a broken one
