"""Tool schemas cleaned to the JSON Schema subset Gemini reads (translators/gemini/schema.py)."""

from __future__ import annotations

from translators.core.report import Report
from translators.gemini.schema import clean, parameters


def _cleaned(schema: dict) -> tuple[dict, list[str]]:
    report = Report()
    return parameters(schema, "tools[3].parameters", report), report.dropped


def test_schema_keyword_is_removed_and_reported() -> None:
    schema, dropped = _cleaned({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"})
    assert schema == {"type": "object"}
    assert dropped == ["tools[3].parameters.$schema"]


def test_vendor_keyword_is_removed_and_reported_at_its_nested_path() -> None:
    schema, dropped = _cleaned({"type": "object",
                                "properties": {"x": {"type": "string", "defer_loading": True}}})
    assert schema["properties"]["x"] == {"type": "string"}
    assert dropped == ["tools[3].parameters.properties.x.defer_loading"]


def test_validation_keywords_gemini_lacks_are_reported() -> None:
    _, dropped = _cleaned({"type": "object", "properties": {
        "n": {"type": "integer", "exclusiveMinimum": 0, "multipleOf": 2},
        "s": {"type": "object", "patternProperties": {"^a": {}}, "propertyNames": {"pattern": "^a"}}}})
    assert dropped == ["tools[3].parameters.properties.n.exclusiveMinimum",
                       "tools[3].parameters.properties.n.multipleOf",
                       "tools[3].parameters.properties.s.patternProperties",
                       "tools[3].parameters.properties.s.propertyNames"]


def test_const_becomes_a_one_value_enum() -> None:
    schema, dropped = _cleaned({"type": "object", "properties": {"k": {"const": "fixed"}}})
    assert schema["properties"]["k"] == {"enum": ["fixed"]}
    assert dropped == []


def test_supported_keywords_are_kept_as_written() -> None:
    supported = {"type": "object", "title": "T", "description": "d", "required": ["a"],
                 "additionalProperties": False, "minProperties": 1,
                 "properties": {"a": {"type": ["string", "null"], "enum": ["x", None], "minLength": 1,
                                      "maxLength": 9, "pattern": "^x", "format": "date-time", "default": "x"},
                                "b": {"type": "array", "items": {"$ref": "#/$defs/B"}, "minItems": 0,
                                      "maxItems": 3, "uniqueItems": True},
                                "c": {"anyOf": [{"type": "number", "minimum": 0, "maximum": 1},
                                                {"type": "null"}]},
                                "d": {"oneOf": [{"type": "boolean"}],
                                      "additionalProperties": {"type": "string"}}},
                 "$defs": {"B": {"type": "integer"}}}
    schema, dropped = _cleaned(supported)
    assert schema == supported
    assert dropped == []


def test_properties_named_like_keywords_are_kept() -> None:
    schema, dropped = _cleaned({"type": "object", "properties": {"pattern": {"type": "string"},
                                                                  "$schema": {"type": "string"}}})
    assert set(schema["properties"]) == {"pattern", "$schema"}
    assert dropped == []


def test_type_gemini_does_not_know_is_reported() -> None:
    schema, dropped = _cleaned({"type": "object", "properties": {"x": {"type": "any"}}})
    assert schema["properties"]["x"] == {}
    assert dropped == ["tools[3].parameters.properties.x.type"]


def test_tuple_items_are_reported() -> None:
    _, dropped = _cleaned({"type": "object",
                           "properties": {"t": {"type": "array", "items": [{"type": "string"}]}}})
    assert dropped == ["tools[3].parameters.properties.t.items"]


def test_keyword_value_of_the_wrong_json_type_is_reported() -> None:
    _, dropped = _cleaned({"type": "object", "properties": {"s": {"type": "string", "maxLength": "9",
                                                                  "minLength": True}}})
    assert dropped == ["tools[3].parameters.properties.s.maxLength",
                       "tools[3].parameters.properties.s.minLength"]


def test_parameters_root_is_an_object_schema() -> None:
    schema, _ = _cleaned({"properties": {"a": {"type": "string"}}})
    assert schema["type"] == "object"


def test_output_schema_is_cleaned_without_forcing_an_object() -> None:
    report = Report()
    schema = {"type": "array", "items": {"type": "string"}, "$schema": "x"}
    cleaned = clean(schema, "text.format.schema", report)
    assert cleaned == {"type": "array", "items": {"type": "string"}}
    assert report.dropped == ["text.format.schema.$schema"]
