"""A client's `text.format` JSON schema, cut to what Claude's structured output enforces
(Anthropic `output_config.format`, Bedrock `outputConfig.textFormat`; docs/anthropic.md
"Structured output").

Claude compiles the schema into a grammar and accepts a subset of JSON Schema: types, objects
whose `additionalProperties` is false, arrays with `minItems` 0 or 1, `enum`/`const`, `anyOf`/
`allOf`, `$ref` into `$defs`, and a fixed set of string formats. Every other keyword is removed,
reported dropped under `text.format.schema…`, and written into the node's description, so the
model is still told what it cannot be forced to do.
"""

from __future__ import annotations

from typing import Any

from translators.core.report import Report
from translators.wire import wirejson

STRING_FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4",
                            "ipv6", "uuid"})
_ANNOTATIONS = ("title", "description")
_KEPT = frozenset({"type", "properties", "required", "items", "enum", "const", "anyOf", "allOf", "oneOf",
                   "$ref", "$defs", "definitions", "additionalProperties", "format", "minItems",
                   *_ANNOTATIONS})


def clean(schema: dict[str, Any], path: str, report: Report) -> dict[str, Any]:
    """A copy of `schema` that Claude's structured output takes; the input is not changed."""
    return _node(schema, path, report)


def _node(node: Any, path: str, report: Report) -> Any:
    if not isinstance(node, dict):
        return node  # `true`/`false` schemas and odd values go as written; the vendor judges
    out: dict[str, Any] = {}
    lost: dict[str, Any] = {}
    for key, value in node.items():
        if key not in _KEPT:
            lost[key] = value
            continue
        if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            out[key] = {name: _node(sub, f"{path}.{key}.{name}", report) for name, sub in value.items()}
        elif key in ("anyOf", "allOf", "oneOf") and isinstance(value, list):
            # oneOf has no grammar form; anyOf accepts the same documents but cannot refuse
            # one that matches two branches
            out["anyOf" if key == "oneOf" else key] = [
                _node(sub, f"{path}.{key}[{i}]", report) for i, sub in enumerate(value)]
        elif key == "items":
            out[key] = _node(value, f"{path}.items", report)
        elif (key == "format" and value not in STRING_FORMATS) or (key == "minItems" and value not in (0, 1)):
            lost[key] = value
        elif key == "additionalProperties":
            if value is not False:
                lost[key] = value
        else:
            out[key] = value
    if _is_object(node):
        out["additionalProperties"] = False
    for key in lost:
        report.drop(f"{path}.{key}")
    if lost:
        said = ", ".join(f"{key}: {wirejson.text(value)}" for key, value in lost.items())
        description = out.get("description")
        out["description"] = f"{description}\n\n{{{said}}}" if isinstance(description, str) else f"{{{said}}}"
    return out


def _is_object(node: dict[str, Any]) -> bool:
    kind = node.get("type")
    return kind == "object" or (isinstance(kind, list) and "object" in kind) or (
        kind is None and "properties" in node)
