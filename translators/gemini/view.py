"""How mitmweb shows a Gemini request and its stream chunks (addon/views.py)."""

from __future__ import annotations

from typing import Any

from translators.dialect import RequestShape, View
from translators.wire.viewtext import as_list, base64_size, file_label, join, role_blocks, short, text


def read_request(body: dict[str, Any]) -> RequestShape:
    system = body.get("systemInstruction") or body.get("system_instruction")
    if isinstance(system, dict):
        parts = as_list(system.get("parts"))
        size = sum(len(text(p.get("text"))) for p in parts if isinstance(p, dict))
        summary = f"systemInstruction: {len(parts)} part(s) ({size:,} chars)"
    else:
        summary = "none"
    items = [role_blocks(c, "parts", None, _media) for c in as_list(body.get("contents"))]
    tools: list[str] = []
    for tool in as_list(body.get("tools")):
        if not isinstance(tool, dict):
            continue
        for key, value in tool.items():
            if key in ("functionDeclarations", "function_declarations"):
                tools += [str(f.get("name")) for f in as_list(value) if isinstance(f, dict)]
            else:
                tools.append(key)
    consumed = frozenset({"contents", "systemInstruction", "system_instruction", "tools"})
    return RequestShape(summary, items, tools, consumed)


def _media(part: dict[str, Any]) -> str | None:
    """`inlineData(application/pdf; 12.0 KiB)`, `fileData(application/pdf; https://…)`; a function
    response with parts says how many."""
    inline, uri = part.get("inlineData"), part.get("fileData")
    if isinstance(inline, dict):
        return file_label("inlineData", inline.get("mimeType"), base64_size(inline.get("data")))
    if isinstance(uri, dict):
        return file_label("fileData", uri.get("mimeType"), uri.get("fileUri"))
    response = part.get("functionResponse")
    if isinstance(response, dict) and as_list(response.get("parts")):
        return f"functionResponse+{len(response['parts'])} part(s)"
    return None


def claims(obj: dict[str, Any]) -> bool:
    return "candidates" in obj or "usageMetadata" in obj


def event_line(name: str, obj: dict[str, Any]) -> tuple[str, str]:
    return "chunk", _line(obj)


def _line(obj: dict[str, Any]) -> str:
    candidates = as_list(obj.get("candidates"))
    cand = candidates[0] if candidates and isinstance(candidates[0], dict) else {}
    content = cand.get("content") if isinstance(cand.get("content"), dict) else {}
    parts: list[str | None] = []
    for part in as_list(content.get("parts")):
        if not isinstance(part, dict):
            continue
        if isinstance(part.get("text"), str):
            parts.append(("thought " if part.get("thought") else "text ") + short(part["text"]))
        elif isinstance(part.get("functionCall"), dict):
            call = part["functionCall"]
            parts.append(join("functionCall", call.get("name"), short(call.get("args"))))
        else:
            parts.append(next(iter(part), "?"))
    if cand.get("finishReason"):
        parts.append(f"finishReason={cand['finishReason']}")
    usage = obj.get("usageMetadata")
    if isinstance(usage, dict):
        parts.append(f"in={usage.get('promptTokenCount')} out={usage.get('candidatesTokenCount')}")
    return join(*parts)


VIEW = View(read_request=read_request, event_line=event_line, claims=claims)
