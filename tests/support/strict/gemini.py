"""What Gemini's `generateContent` / `streamGenerateContent` / `countTokens` refuse, as Gemini words
it: 400 `{"error": {"code": 400, "message", "status": "INVALID_ARGUMENT"}}`
(https://ai.google.dev/api/generate-content; docs/gemini.md "Errors", "Refusals").

The request body's fields are checked against the installed google-genai types (google/genai/types.py:
`Content`, `Tool`, `ToolConfig`, `GenerationConfig`, `SafetySetting`), which forbid unknown fields as
Gemini's proto-JSON parser does.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from tests.support.strict import JSON, Invalid, Issued, Refusal, parse_json, sse_payloads

# maxOutputTokens per model (https://ai.google.dev/gemini-api/docs/models, "Output token limit"):
# 2.0 and 1.5 write 8,192, 2.5 and 3 write 65,536.
OUTPUT_LIMITS = (("gemini-1.5", 8192), ("gemini-2.0", 8192), ("gemini-2.5", 65_536), ("gemini-3", 65_536))

FUNCTION_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$")
"""`FunctionDeclaration.name` (google/genai/types.py) says 128 characters; the API answers 64 (its
wording below, recorded in docs/gemini.md "Refusals")."""

SKIP_SIGNATURE = "skip_thought_signature_validator"
"""The value Google documents for a call whose signature is lost
(https://ai.google.dev/gemini-api/docs/thought-signatures)."""

_TOP: dict[str, str] = {"contents": "Content", "systemInstruction": "Content",
                        "system_instruction": "Content",
                        "tools": "Tool", "toolConfig": "ToolConfig", "tool_config": "ToolConfig",
                        "generationConfig": "GenerationConfig", "generation_config": "GenerationConfig",
                        "safetySettings": "SafetySetting", "safety_settings": "SafetySetting",
                        "cachedContent": "", "cached_content": "", "labels": "", "model": ""}
"""GenerateContentRequest's fields (https://ai.google.dev/api/generate-content#request-body; `model`
is its own field too, required inside countTokens' `generateContentRequest`)."""


def refusal(message: str, status: str = "INVALID_ARGUMENT") -> Refusal:
    body = {"error": {"code": 400, "message": message, "status": status}}
    return 400, dict(JSON), json.dumps(body).encode()


def model_of(path: str) -> str:
    match = re.search(r"models/([^/:?]+)", path)
    return match.group(1) if match else ""


def check(path: str, headers: Mapping[str, str], raw: bytes, *, issued: Issued) -> Refusal | None:
    try:
        _check(path, raw, issued)
    except Invalid as broken:
        return refusal(broken.message)
    return None


def _check(path: str, raw: bytes, issued: Issued) -> None:
    try:
        body = parse_json(raw)
    except ValueError:
        raise Invalid("Invalid JSON payload received. Unexpected token.") from None
    if not isinstance(body, dict):
        raise Invalid("Invalid JSON payload received. Expected an object.")
    if path.split("?", 1)[0].endswith(":countTokens") and "generateContentRequest" in body:
        body = body["generateContentRequest"]  # countTokens' own wrapper (CountTokensRequest)
        if not isinstance(body, dict):
            raise Invalid("Invalid JSON payload received. Expected an object.")
    _shape(body)
    contents = body.get("contents") or []
    if not contents:  # "contents: Required" (GenerateContentRequest)
        raise Invalid("* GenerateContentRequest.contents: contents is not specified\n")
    _functions(body.get("tools") or [])
    _turns(contents)
    model = model_of(path)
    _output(body, model)
    _signatures(contents, model, issued)


# -- the body's fields ------------------------------------------------------------------------------
def _snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def _path(loc: tuple[Any, ...]) -> str:
    out = ""
    for item in loc:
        if isinstance(item, int):
            out += f"[{item}]"
        else:
            out += ("." if out else "") + _snake(str(item))
    return out


def _model(name: str) -> type[BaseModel]:
    from google.genai import types  # imported here: a heavy module, only for Gemini requests
    found: type[BaseModel] = getattr(types, name)
    return found


def _shape(body: dict[str, Any]) -> None:
    for key, value in body.items():
        if key not in _TOP:
            raise Invalid(f'Invalid JSON payload received. Unknown name "{key}": Cannot find field.')
        kind = _TOP[key]
        if not kind:
            continue
        items = value if isinstance(value, list) and key in ("contents", "tools", "safetySettings",
                                                               "safety_settings") else [value]
        for n, item in enumerate(items):
            where: tuple[Any, ...] = (key, n) if items is value else (key,)
            try:
                _model(kind).model_validate(item)
            except ValidationError as failed:
                error = failed.errors()[0]
                loc = where + tuple(error["loc"])
                if error["type"] == "extra_forbidden":
                    raise Invalid(f'Invalid JSON payload received. Unknown name "{loc[-1]}" at '
                                  f"'{_path(loc[:-1])}': Cannot find field.") from None
                raise Invalid(f"Invalid value at '{_path(loc)}': {error['msg']}") from None


# -- function declarations -------------------------------------------------------------------------
def _functions(tools: list[Any]) -> None:
    for t, tool in enumerate(tools):
        declarations = tool.get("functionDeclarations") or tool.get("function_declarations") or []
        for f, declaration in enumerate(declarations):
            where = f"GenerateContentRequest.tools[{t}].function_declarations[{f}]"
            if not FUNCTION_NAME.match(declaration.get("name") or ""):
                raise Invalid(f"* {where}.name: Invalid function name. Must start with a letter or an "
                              "underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), "
                              "colons (:), or dashes (-), with a maximum length of 64.\n")
            schema = declaration.get("parameters")
            json_schema = declaration.get("parametersJsonSchema", declaration.get("parameters_json_schema"))
            # "This field is mutually exclusive with `parameters`"
            # (FunctionDeclaration.parameters_json_schema)
            if schema is not None and json_schema is not None:
                raise Invalid(f"* {where}.parameters_json_schema: parameters_json_schema and parameters are "
                              "mutually exclusive.\n")
            if isinstance(schema, dict):
                _required_defined(schema, f"{where}.parameters")
            # "The schema must describe an object where the properties are the parameters"
            # (FunctionDeclaration.parameters_json_schema)
            is_object = isinstance(json_schema, dict) and json_schema.get("type") == "object"
            if json_schema is not None and not is_object:
                raise Invalid(f"* {where}.parameters_json_schema: the schema must describe an object.\n")


def _required_defined(schema: dict[str, Any], where: str) -> None:
    """`required` may name only defined properties: "property is not defined" (docs/gemini.md "Schema
    keywords Gemini rejects")."""
    properties = schema.get("properties") or {}
    for n, name in enumerate(schema.get("required") or []):
        if name not in properties:
            raise Invalid(f"* {where}.required[{n}]: property is not defined\n")
    for name, sub in properties.items():
        if isinstance(sub, dict):
            _required_defined(sub, f"{where}.properties[{name}]")
    if isinstance(schema.get("items"), dict):
        _required_defined(schema["items"], f"{where}.items")


# -- the conversation --------------------------------------------------------------------------------
def _parts(content: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in content.get("parts") or [] if isinstance(p, dict)]


def _calls(content: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in _parts(content) if "functionCall" in p or "function_call" in p]


def _responses(content: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in _parts(content) if "functionResponse" in p or "function_response" in p]


_DATA = ("text", "inlineData", "inline_data", "fileData", "file_data", "functionCall", "function_call",
         "functionResponse", "function_response", "executableCode", "executable_code", "codeExecutionResult",
         "code_execution_result", "toolCall", "tool_call", "toolResponse", "tool_response")
"""The members of `Part`'s `data` oneof: a part holds one of them (https://ai.google.dev/api/caching#Part)."""


def _turns(contents: list[dict[str, Any]]) -> None:
    """Roles, and the function-call / function-response turn order Gemini enforces (its wordings
    recorded in docs/gemini.md "Refusals")."""
    for i, content in enumerate(contents):
        if content.get("role", "user") not in ("user", "model"):
            raise Invalid("Please use a valid role: user, model.")
        for j, part in enumerate(_parts(content)):
            if not any(key in part for key in _DATA):
                raise Invalid(f"* GenerateContentRequest.contents[{i}].parts[{j}].data: required oneof field "
                              "'data' must have one initialized field\n")
        if not content.get("parts"):
            raise Invalid(f"* GenerateContentRequest.contents[{i}].parts: contents.parts must not be "
                          "empty.\n")
        previous = contents[i - 1] if i else None
        if _calls(content) and (previous is None or previous.get("role", "user") != "user"):
            raise Invalid("Please ensure that function call turn comes immediately after a user turn or "
                          "after a function response turn.")
        if answers := _responses(content):
            if previous is None or not _calls(previous):
                raise Invalid("Please ensure that function response turn comes immediately after a function "
                              "call turn.")
            if len(answers) != len(_calls(previous)):
                raise Invalid("Please ensure that the number of function response parts is equal to the "
                              "number of function call parts of the function call turn.")


def _output(body: dict[str, Any], model: str) -> None:
    config = body.get("generationConfig") or body.get("generation_config") or {}
    value = config.get("maxOutputTokens", config.get("max_output_tokens"))
    limit = next((n for prefix, n in OUTPUT_LIMITS if model.startswith(prefix)), None)
    if limit is not None and isinstance(value, int) and not 1 <= value <= limit:
        raise Invalid(f"Unable to submit request because it has a maxOutputTokens value of {value} but the "
                      f"supported range is from 1 (inclusive) to {limit + 1} (exclusive). Update the value "
                      "and try again.")


def _signature_bytes(value: str) -> bytes | None:
    for decode in (base64.b64decode, base64.urlsafe_b64decode):
        try:
            return decode(value + "=" * (-len(value) % 4))
        except (binascii.Error, ValueError):
            continue
    return None


def _signatures(contents: list[dict[str, Any]], model: str, issued: Issued) -> None:
    """Thought signatures (https://ai.google.dev/gemini-api/docs/thought-signatures; docs/gemini.md
    "Thought signatures"): a signature sent back must be one Gemini issued (standard or URL-safe
    base64 of the same bytes); on Gemini 3, the first `functionCall` part of every model step of
    the current turn (after the last user message that is not function responses) must carry one."""
    known = {_signature_bytes(s) for s in issued.thought_signatures}
    for content in contents:
        for part in _parts(content):
            signature = part.get("thoughtSignature", part.get("thought_signature"))
            if signature is None or signature == SKIP_SIGNATURE:
                continue
            if _signature_bytes(signature) not in known:
                raise Invalid("Corrupted thought signature.")
    if not model.startswith("gemini-3"):
        return
    start = max((i for i, c in enumerate(contents) if c.get("role", "user") == "user" and not _responses(c)),
                default=0)
    for i in range(start, len(contents)):
        calls = _calls(contents[i]) if contents[i].get("role") == "model" else []
        if calls and "thoughtSignature" not in calls[0] and "thought_signature" not in calls[0]:
            name = (calls[0].get("functionCall") or calls[0].get("function_call") or {}).get("name")
            raise Invalid("Function call is missing a thought_signature in functionCall parts. This is "
                          "required for tools to work correctly, and missing thought_signature may lead to "
                          f"degraded model performance. Additional data, function call `default_api:{name}` "
                          f", position {i + 1}. Please refer to "
                          "https://ai.google.dev/gemini-api/docs/thought-signatures for more details.")


# -- what an answer hands out ------------------------------------------------------------------------
def issued_in(answer: bytes) -> Issued:
    """Every `thoughtSignature` of a Gemini answer (SSE, a JSON array stream, or a whole answer)."""
    out = Issued()
    for payload in sse_payloads(answer):
        for candidate in (payload.get("candidates") or []) if isinstance(payload, dict) else []:
            for part in (candidate.get("content") or {}).get("parts") or []:
                if isinstance(part, dict) and part.get("thoughtSignature"):
                    out.thought_signatures.add(part["thoughtSignature"])
    return out
