"""Tool and output schemas in the JSON Schema subset Gemini reads (`parametersJsonSchema`,
`responseJsonSchema`).

One approach throughout: the JSON Schema field, never the OpenAPI `parameters` subset, cleaned to
the keywords of google-genai's `JSONSchema` model ("a subset of JSON Schema ... used by the Gemini
model"; docs/gemini.md "Request", "Schema keywords Gemini rejects"). Gemini answers 400 to the whole request
for one keyword it
has no field for (`$schema`, `const`, `exclusiveMinimum`, Codex's `defer_loading`...), so every
other keyword is removed and reported as a dropped path such as
`tools[3].parameters.properties.x.exclusiveMinimum`. `const` is kept as a one-value `enum`.
"""

from __future__ import annotations

from typing import Any

from translators.core.report import Report

# keyword -> the JSON types its value may have (google-genai `types.JSONSchema`).
_SCALARS: dict[str, tuple[type, ...]] = {
    "format": (str,), "title": (str,), "description": (str,), "pattern": (str,),
    "minItems": (int,), "maxItems": (int,), "minProperties": (int,), "maxProperties": (int,),
    "minLength": (int,), "maxLength": (int,), "minimum": (int, float), "maximum": (int, float),
    "uniqueItems": (bool,), "$ref": (str,), "enum": (list,), "default": (object,),
}
_SCHEMA_MAPS = ("properties", "$defs")
_SCHEMA_LISTS = ("anyOf", "oneOf")
TYPES = frozenset({"null", "boolean", "object", "array", "number", "integer", "string"})


def parameters(schema: dict[str, Any], path: str, report: Report) -> dict[str, Any]:
    """A function's parameters: an object schema at the root, as `parametersJsonSchema` requires."""
    out = clean(schema, path, report)
    if out.get("type") != "object":
        if "type" in out:
            report.drop(f"{path}.type")
        out = {"type": "object", **{k: v for k, v in out.items() if k != "type"}}
    return out


def clean(schema: Any, path: str, report: Report) -> dict[str, Any]:
    if not isinstance(schema, dict):
        report.drop(path)
        return {}
    out: dict[str, Any] = {}
    for key, value in schema.items():
        # the path of a key is written out only where it is reported or recursed into: most
        # keywords of a tool schema are plain scalars that pass as they are
        if key in _SCALARS:
            if _fits(value, _SCALARS[key]):
                out[key] = value
            else:
                report.drop(f"{path}.{key}")
        elif key == "type":
            kind = _type(value)
            if kind is None:
                report.drop(f"{path}.{key}")
            else:
                out["type"] = kind
        elif key in _SCHEMA_MAPS:
            if isinstance(value, dict):
                out[key] = {name: clean(sub, f"{path}.{key}.{name}", report) for name, sub in value.items()}
            else:
                report.drop(f"{path}.{key}")
        elif key in _SCHEMA_LISTS:
            if isinstance(value, list):
                out[key] = [clean(sub, f"{path}.{key}[{i}]", report) for i, sub in enumerate(value)]
            else:
                report.drop(f"{path}.{key}")
        elif key == "items":
            if isinstance(value, dict):
                out[key] = clean(value, f"{path}.{key}", report)
            else:
                report.drop(f"{path}.{key}")  # a draft-4 tuple `items: [...]`: JSONSchema.items is one schema
        elif key == "additionalProperties":
            if isinstance(value, bool):
                out[key] = value
            elif isinstance(value, dict):
                out[key] = clean(value, f"{path}.{key}", report)
            else:
                report.drop(f"{path}.{key}")
        elif key == "required":
            if isinstance(value, list) and all(isinstance(name, str) for name in value):
                out[key] = list(value)
            else:
                report.drop(f"{path}.{key}")
        elif key == "const" and "enum" not in schema:
            out["enum"] = [value]
        else:
            report.drop(f"{path}.{key}")
    return out


def _type(value: Any) -> str | list[str] | None:
    if isinstance(value, str):
        return value if value in TYPES else None
    if isinstance(value, list) and value and all(isinstance(v, str) and v in TYPES for v in value):
        return list(value)
    return None


def _fits(value: Any, kinds: tuple[type, ...]) -> bool:
    if isinstance(value, bool) and bool not in kinds and object not in kinds:
        return False  # JSON true is not a number
    return isinstance(value, kinds)
