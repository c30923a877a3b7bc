"""Vertex streamed function-call arguments (translators/gemini/partial_args.py)."""

from __future__ import annotations

import json

import pytest

from tests.translators.growth import SAME_COST_BOUND, slower
from translators.core.errors import UpstreamProtocolError
from translators.gemini.partial_args import ArgsBuilder, parse_path


def _built(*partials: dict, initial: dict | None = None) -> object:
    builder = ArgsBuilder(initial)
    for partial in partials:
        builder.add(partial)
    return json.loads(builder.json())


def test_json_path_segments_are_names_indexes_and_quoted_names() -> None:
    assert parse_path("$.a[2]['b c'][\"d\"]") == ["a", 2, "b c", "d"]


def test_string_continues_while_will_continue_is_set() -> None:
    assert _built({"jsonPath": "$.id", "stringValue": "ab", "willContinue": True},
                  {"jsonPath": "$.id", "stringValue": "cd", "willContinue": True},
                  {"jsonPath": "$.id", "stringValue": ""}) == {"id": "abcd"}


def test_string_without_will_continue_replaces_the_value() -> None:
    built = _built({"jsonPath": "$.id", "stringValue": "a"}, {"jsonPath": "$.id", "stringValue": "b"})
    assert built == {"id": "b"}


def test_numbers_booleans_and_nulls_keep_their_json_types() -> None:
    assert _built({"jsonPath": "$.n", "numberValue": 3.0}, {"jsonPath": "$.f", "numberValue": 0.5},
                  {"jsonPath": "$.b", "boolValue": True}, {"jsonPath": "$.z", "nullValue": "NULL_VALUE"}
                  ) == {"n": 3, "f": 0.5, "b": True, "z": None}


def test_nested_paths_build_objects_and_arrays() -> None:
    assert _built({"jsonPath": "$.a[1].b", "stringValue": "x"}) == {"a": [None, {"b": "x"}]}


def test_partials_add_to_arguments_given_whole() -> None:
    assert _built({"jsonPath": "$.b", "stringValue": "2"}, initial={"a": 1}) == {"a": 1, "b": "2"}


@pytest.mark.parametrize("partial", [
    {"stringValue": "no path"},
    {"jsonPath": "a.b", "stringValue": "x"},
    {"jsonPath": "$.a"},
    {"jsonPath": "$", "stringValue": "x"},
    {"jsonPath": "$[100000000]", "stringValue": "x"},
])
def test_partial_argument_gemini_could_not_have_meant_is_a_protocol_error(partial: dict) -> None:
    with pytest.raises(UpstreamProtocolError):
        ArgsBuilder().add(partial)


def test_paths_that_disagree_on_a_container_are_a_protocol_error() -> None:
    builder = ArgsBuilder()
    builder.add({"jsonPath": "$.a[0]", "stringValue": "x"})
    with pytest.raises(UpstreamProtocolError):
        builder.add({"jsonPath": "$.a.b", "stringValue": "y"})


def test_a_long_string_in_many_pieces_costs_about_what_replacing_it_does() -> None:
    """The pieces of a continuing string are joined once, at the end (docs/design.md "Limits")."""
    pieces = ["s" * 256] * 6250

    def build(will_continue: bool) -> None:
        builder = ArgsBuilder()
        for piece in pieces:
            builder.add({"jsonPath": "$.patch", "stringValue": piece, "willContinue": will_continue})
        builder.json()

    assert slower(lambda: build(True), lambda: build(False)) < SAME_COST_BOUND


def test_a_continued_string_under_a_later_path_is_replaced_like_a_string() -> None:
    assert _built({"jsonPath": "$.a", "stringValue": "x", "willContinue": True},
                  {"jsonPath": "$.a", "stringValue": "y", "willContinue": True},
                  {"jsonPath": "$.a.b", "numberValue": 1}) == {"a": {"b": 1}}
