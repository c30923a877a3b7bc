"""translators/families/claude/structured.py: a client's JSON schema cut to what Claude's structured output
enforces; every keyword removed is reported and told to the model in the description."""

from __future__ import annotations

from translators.core.report import Report
from translators.families.claude.structured import clean


def cleaned(schema: dict) -> tuple[dict, Report]:
    report = Report()
    return clean(schema, "text.format.schema", report), report


def test_supported_keywords_pass_unchanged() -> None:
    schema = {"type": "object", "properties": {"when": {"type": "string", "format": "date"},
                                               "tags": {"type": "array", "items": {"enum": ["a", "b"]},
                                                        "minItems": 1}},
              "required": ["when"], "additionalProperties": False, "$defs": {"x": {"const": 3}}}
    out, report = cleaned(schema)
    assert out == schema and report.dropped == []


def test_an_object_is_closed_as_claude_requires() -> None:
    out, report = cleaned({"type": "object", "properties": {"a": {"type": "object", "properties": {}}}})
    assert out["additionalProperties"] is False and out["properties"]["a"]["additionalProperties"] is False
    assert report.dropped == []


def test_open_additional_properties_cannot_be_enforced_and_are_reported() -> None:
    out, report = cleaned({"type": "object", "properties": {}, "additionalProperties": {"type": "string"}})
    assert out["additionalProperties"] is False
    assert report.dropped == ["text.format.schema.additionalProperties"]


def test_unsupported_constraints_are_removed_reported_and_described() -> None:
    out, report = cleaned({"type": "object", "properties": {
        "n": {"type": "integer", "description": "how many", "minimum": 1, "maximum": 9},
        "s": {"type": "string", "format": "binary", "maxLength": 5},
        "l": {"type": "array", "items": {"type": "string"}, "minItems": 2}}})
    props = out["properties"]
    assert props["n"] == {"type": "integer", "description": "how many\n\n{minimum: 1, maximum: 9}"}
    assert props["s"] == {"type": "string", "description": '{format: "binary", maxLength: 5}'}
    assert "minItems" not in props["l"]
    at = "text.format.schema.properties."
    assert report.dropped == [at + "n.minimum", at + "n.maximum", at + "s.format", at + "s.maxLength",
                              at + "l.minItems"]


def test_one_of_becomes_any_of() -> None:
    out, _ = cleaned({"oneOf": [{"type": "string"}, {"type": "integer", "minimum": 0}]})
    assert out["anyOf"][0] == {"type": "string"} and "oneOf" not in out


def test_the_clients_schema_is_not_changed() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}
    before = repr(schema)
    cleaned(schema)
    assert repr(schema) == before
