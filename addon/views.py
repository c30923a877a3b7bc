"""mitmproxy content views that make a gateway flow readable in mitmweb and mitmproxy's console.

mitmweb does not show `flow.metadata` (docs/mitmproxy.md "Where flows show information"), where the addon
keeps the client's
original request and the upstream's raw answer; these views render them next to the bodies:

- **Translation** (auto on the request of a gateway flow): what changed between the client's
  Responses request and the upstream request (model, system, items, tools, top-level fields),
  with the dropped paths and notes first, then both bodies in full.
- **SSE events** (auto on the response of a gateway flow, and on any `text/event-stream` body):
  one line per event (type, item, delta preview) for what the client got and, under its own
  heading, for what the upstream sent (SSE, or Bedrock's binary event stream).

The addon registers them with `addons = [Gateway(), views.Views()]`; `-s addon/views.py` on its
own works too.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from mitmproxy import contentviews, http
from mitmproxy.contentviews import Metadata

KEY = "gateway"
"""`flow.metadata` key of the addon's summary (addon/flowinfo.py)."""
CLIENT_REQUEST = "gateway.client_request"
TRANSLATION = "gateway.translation"
UPSTREAM_RESPONSE = "gateway.upstream_response"

PREVIEW = 60
"""Characters of a delta or value shown on one line."""
WIDTH = 80
"""Lines of names are wrapped at about this width."""

DIALECT_NAMES = {"responses": "Responses", "anthropic": "Anthropic Messages", "chat": "Chat Completions",
                 "gemini": "Gemini", "bedrock": "Bedrock Converse"}


# -- small helpers ------------------------------------------------------------------------------
def _gateway(metadata: Metadata) -> dict[str, Any] | None:
    flow = metadata.flow
    info = flow.metadata.get(KEY) if flow is not None else None
    return info if isinstance(info, dict) else None


def _text(value: bytes | str | None) -> str:
    if value is None:
        return ""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def _json(value: bytes | str | None) -> Any:
    try:
        return json.loads(_text(value))
    except ValueError:
        return None


def _short(value: Any, limit: int = PREVIEW) -> str:
    """One line, at most `limit` characters: strings JSON-quoted (newlines show as \\n)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _runs(labels: Iterable[str]) -> str:
    """`a, a, b, a` -> `a ×2, b, a` (order kept, consecutive repeats folded)."""
    out: list[list[Any]] = []
    for label in labels:
        if out and out[-1][0] == label:
            out[-1][1] += 1
        else:
            out.append([label, 1])
    return ", ".join(label if n == 1 else f"{label} ×{n}" for label, n in out) or "none"


def _wrap(items: list[str], indent: str) -> list[str]:
    lines: list[str] = []
    line = ""
    for item in items:
        if line and len(line) + len(item) + 2 > WIDTH:
            lines.append(indent + line + ",")
            line = ""
        line = f"{line}, {item}" if line else item
    if line:
        lines.append(indent + line)
    return lines


def _chars(text: str) -> str:
    return f"{len(text):,} chars"


def _resolve(body: Any, path: str) -> Any:
    """`tools[9]`, `text.verbosity`, `input[3].phase` looked up in `body`; KeyError if absent."""
    value = body
    for name, index in re.findall(r"([^.\[\]]+)|\[(\d+)\]", path):
        if index:
            if not isinstance(value, list):
                raise KeyError(path)
            value = value[int(index)]
        else:
            if not isinstance(value, dict):
                raise KeyError(path)
            value = value[name]
    return value


def _describe_value(value: Any) -> str:
    if isinstance(value, dict) and isinstance(value.get("name"), str):
        return f"{value.get('type', 'item')} {value['name']}"
    return _short(value)


# -- request shapes -----------------------------------------------------------------------------
class Shape:
    """What the Translation view compares, read off one request body of one dialect."""

    def __init__(self, dialect: str, body: Any, model: str | None = None) -> None:
        self.dialect = dialect
        self.body = body if isinstance(body, dict) else {}
        reader = getattr(self, f"_read_{dialect}", self._read_responses)
        self.model: str | None = self.body.get("model") if isinstance(self.body.get("model"), str) else model
        self.system = ""
        self.items: list[str] = []
        self.tools: list[str] = []
        self.consumed: set[str] = {"model"}
        reader()
        self.fields = {k: v for k, v in self.body.items() if k not in self.consumed}

    # Responses: instructions + developer/system messages in `input`
    def _read_responses(self) -> None:
        b = self.body
        self.consumed |= {"input", "instructions", "tools"}
        parts = []
        if isinstance(b.get("instructions"), str):
            parts.append(f"instructions ({_chars(b['instructions'])})")
        items = b.get("input")
        if isinstance(items, str):
            self.items = ["text"]
        elif isinstance(items, list):
            system = [i for i in items if isinstance(i, dict) and i.get("role") in ("developer", "system")]
            if system:
                size = sum(len(_text(c.get("text"))) for i in system for c in _list(i.get("content"))
                           if isinstance(c, dict))
                parts.append(f"{len(system)} developer/system message(s) in input ({size:,} chars)")
            self.items = [_responses_item(i) for i in items]
        self.system = "; ".join(parts) or "none"
        for tool in _list(b.get("tools")):
            if not isinstance(tool, dict):
                continue
            if tool.get("type") == "namespace":
                self.tools += [f"{tool.get('name')}.{t.get('name')}" for t in _list(tool.get("tools"))
                               if isinstance(t, dict)]
            else:
                self.tools.append(str(tool.get("name") or tool.get("type")))

    def _read_anthropic(self) -> None:
        b = self.body
        self.consumed |= {"messages", "system", "tools"}
        system = b.get("system")
        if isinstance(system, str):
            self.system = f"system: text ({_chars(system)})"
        elif isinstance(system, list):
            size = sum(len(_text(x.get("text"))) for x in system if isinstance(x, dict))
            self.system = f"system: {len(system)} block(s) ({size:,} chars)"
        else:
            self.system = "none"
        self.items = [_role_blocks(m, "content", "type") for m in _list(b.get("messages"))]
        self.tools = [str(t.get("name") or t.get("type"))
                      for t in _list(b.get("tools")) if isinstance(t, dict)]

    def _read_chat(self) -> None:
        b = self.body
        self.consumed |= {"messages", "tools"}
        messages = _list(b.get("messages"))
        system = [m for m in messages if isinstance(m, dict) and m.get("role") in ("system", "developer")]
        size = sum(len(_text(m.get("content"))) if isinstance(m.get("content"), str) else 0 for m in system)
        self.system = f"{len(system)} system/developer message(s) ({size:,} chars)" if system else "none"
        self.items = [str(m.get("role")) if isinstance(m, dict) else "?" for m in messages]
        for tool in _list(b.get("tools")):
            if isinstance(tool, dict):
                inner = tool.get(tool.get("type")) if isinstance(tool.get(tool.get("type")), dict) else tool
                self.tools.append(str(inner.get("name") or tool.get("type")))

    def _read_gemini(self) -> None:
        b = self.body
        self.consumed |= {"contents", "systemInstruction", "system_instruction", "tools"}
        system = b.get("systemInstruction") or b.get("system_instruction")
        if isinstance(system, dict):
            parts = _list(system.get("parts"))
            size = sum(len(_text(p.get("text"))) for p in parts if isinstance(p, dict))
            self.system = f"systemInstruction: {len(parts)} part(s) ({size:,} chars)"
        else:
            self.system = "none"
        self.items = [_role_blocks(c, "parts", None) for c in _list(b.get("contents"))]
        for tool in _list(b.get("tools")):
            if not isinstance(tool, dict):
                continue
            for key, value in tool.items():
                if key in ("functionDeclarations", "function_declarations"):
                    self.tools += [str(f.get("name")) for f in _list(value) if isinstance(f, dict)]
                else:
                    self.tools.append(key)

    def _read_bedrock(self) -> None:
        b = self.body
        self.consumed |= {"messages", "system", "toolConfig", "modelId"}
        system = _list(b.get("system"))
        size = sum(len(_text(x.get("text"))) for x in system if isinstance(x, dict))
        self.system = f"system: {len(system)} block(s) ({size:,} chars)" if system else "none"
        self.items = [_role_blocks(m, "content", None) for m in _list(b.get("messages"))]
        config = b.get("toolConfig") if isinstance(b.get("toolConfig"), dict) else {}
        for tool in _list(config.get("tools")):
            if isinstance(tool, dict) and isinstance(tool.get("toolSpec"), dict):
                self.tools.append(str(tool["toolSpec"].get("name")))


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _responses_item(item: Any) -> str:
    if not isinstance(item, dict):
        return "?"
    kind = str(item.get("type") or "message")
    return f"{kind}/{item['role']}" if kind == "message" and item.get("role") else kind


_NOT_KINDS = ("cache_control", "cachePoint", "thoughtSignature")


def _role_blocks(message: Any, key: str, type_key: str | None) -> str:
    """`user[text,tool_result]`: a message's role and the kinds of its blocks."""
    if not isinstance(message, dict):
        return "?"
    blocks = message.get(key)
    if isinstance(blocks, str):
        kinds = ["text"]
    else:
        kinds = []
        for block in _list(blocks):
            if not isinstance(block, dict):
                continue
            if type_key and type_key in block:
                kinds.append(str(block[type_key]))
            else:
                kinds.append(next((k for k in block if k not in _NOT_KINDS), "?"))
    return f"{message.get('role', '?')}[{','.join(kinds)}]"


# -- the Translation view -----------------------------------------------------------------------
def translation_text(upstream_body: bytes, flow_metadata: dict[str, Any]) -> str:
    info = flow_metadata.get(KEY) if isinstance(flow_metadata.get(KEY), dict) else {}
    translation = flow_metadata.get(TRANSLATION) if isinstance(flow_metadata.get(TRANSLATION), dict) else None
    client_raw = _text(flow_metadata.get(CLIENT_REQUEST))
    client = _json(client_raw)
    dialect = str((translation or {}).get("target") or info.get("upstream") or "?")
    name = DIALECT_NAMES.get(dialect, dialect)

    out = [f"Responses -> {name}  ({info.get('client_model')} -> {info.get('model')})"]
    if info.get("url"):
        out.append(f"upstream: POST {info['url']}")
    if info.get("kind") == "compaction":
        out.append("kind: compaction (Codex's remote compaction: the upstream writes a handoff summary, "
                   "returned as one compaction item)")
    for key in ("refused", "error"):
        if info.get(key):
            out.append(f"{key.upper()}: {info[key]}")
    dropped = list(info.get("dropped") or [])
    harmless = set(info.get("cosmetic") or ())
    lost = sum(1 for path in dropped if path not in harmless)
    out.append(f"dropped ({len(dropped)}: {lost} lossy, {len(dropped) - lost} cosmetic):" if dropped
               else "dropped: nothing")
    for path in dropped:
        # the kind as addon/flowinfo.py counts it: a flow saved without kinds has lossy drops only
        kind = "cosmetic" if path in harmless else "lossy"
        try:
            out.append(f"  - {kind}: {path} = {_describe_value(_resolve(client, path))}")
        except (KeyError, IndexError):
            out.append(f"  - {kind}: {path}")
    notes = list(info.get("notes") or [])
    out.append(f"notes ({len(notes)}):" if notes else "notes: none")
    out += [f"  - {note}" for note in notes]
    out.append("")

    if translation is None:
        out.append("No upstream request: the gateway answered the client itself.")
        out += ["", f"── client request (Responses, {len(client_raw):,} bytes) ──", _pretty(client_raw)]
        return "\n".join(out)

    before = Shape("responses", client)
    after = Shape(dialect, _json(upstream_body), model=str(translation.get("model") or ""))
    out.append(f"{'':<10}client (Responses)  ->  upstream ({name})")
    out.append(f"{'model':<10}{before.model}  ->  {after.model}")
    out.append(f"{'system':<10}{before.system}")
    out.append(f"{'':<10}->  {after.system}")
    out.append(f"{'items':<10}{len(before.items)}: {_runs(before.items)}")
    out.append(f"{'':<10}->  {len(after.items)}: {_runs(after.items)}")
    out += _tools_diff(before.tools, after.tools, translation)
    out += _fields_diff(before.fields, after.fields)
    out += ["", f"── client request (Responses, {len(client_raw):,} bytes) ──", _pretty(client_raw),
            "", f"── upstream request ({name}, {len(upstream_body):,} bytes) ──", _pretty(upstream_body)]
    return "\n".join(out)


def _tools_diff(before: list[str], after: list[str], translation: dict[str, Any]) -> list[str]:
    by_wire = ((translation.get("tools") or {}).get("by_wire") or {}) if isinstance(
        translation.get("tools"), dict) else {}
    out = [f"{'tools':<10}{len(before)}  ->  {len(after)}"]
    origin: dict[str, str] = {}
    for wire in after:
        entry = by_wire.get(wire)
        if isinstance(entry, dict) and entry.get("name"):
            namespace = entry.get("namespace")
            origin[wire] = f"{namespace}.{entry['name']}" if namespace else entry["name"]
        else:
            origin[wire] = wire
    kept = [w for w in after if origin[w] == w and w in before]
    renamed = [f"{origin[w]} -> {w}" for w in after if origin[w] != w and origin[w] in before]
    missing = [t for t in before if t not in origin.values()]
    added = [w for w in after if origin[w] not in before]
    for label, names in (("same", kept), ("renamed", renamed), ("not sent", missing), ("added", added)):
        if names:
            lines = _wrap(names, " " * 22)
            out.append(f"{'':<10}{label + ':':<12}{lines[0].lstrip()}")
            out += lines[1:]
    return out


def _fields_diff(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    out = ["fields"]
    both = [k for k in before if k in after]
    for key in both:
        out.append(f"  {key}: {_short(before[key])}  ->  {_short(after[key])}")
    for label, side, other in (("client only", before, after), ("upstream only", after, before)):
        keys = [k for k in side if k not in other]
        if keys:
            out.append(f"  {label}:")
            out += [f"    {k}: {_short(side[k])}" for k in keys]
    return out


def _pretty(raw: bytes | str) -> str:
    value = _json(raw)
    if value is None:
        return _text(raw)
    return json.dumps(value, indent=2, ensure_ascii=False)


class TranslationView(contentviews.Contentview):
    name = "Translation"
    syntax_highlight = "none"

    def prettify(self, data: bytes, metadata: Metadata) -> str:
        if _gateway(metadata) is None or metadata.flow is None:
            raise ValueError("not a gateway flow (no flow.metadata['gateway'])")
        return translation_text(data, metadata.flow.metadata)

    def render_priority(self, data: bytes, metadata: Metadata) -> float:
        if _gateway(metadata) is not None and isinstance(metadata.http_message, http.Request):
            return 3
        return -1


# -- event lines --------------------------------------------------------------------------------
def sse_events(data: bytes) -> list[tuple[str, str]]:
    """(event name, data) per server-sent event."""
    events: list[tuple[str, str]] = []
    name, lines = "", []
    for line in [*_text(data).replace("\r\n", "\n").replace("\r", "\n").split("\n"), ""]:
        if not line:
            if lines:
                events.append((name or "message", "\n".join(lines)))
            name, lines = "", []
        elif line.startswith(":"):
            continue
        else:
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "data":
                lines.append(value)
            elif field == "event":
                name = value
    return events


def eventstream_events(data: bytes) -> list[tuple[str, str]]:
    """(event type, JSON payload) per AWS event-stream frame (Bedrock ConverseStream)."""
    from botocore.eventstream import EventStreamBuffer

    buffer = EventStreamBuffer()
    buffer.add_data(data)
    events = []
    for message in buffer:
        headers = dict(message.headers)
        kind = headers.get(":event-type") or headers.get(":exception-type") or headers.get(":message-type")
        events.append((str(kind), _text(message.payload)))
    return events


def event_line(name: str, payload: str) -> tuple[str, str]:
    """(type, `where | preview`) for one event of any dialect."""
    obj = _json(payload)
    if not isinstance(obj, dict):
        return name, _short(payload)
    kind = obj.get("type") if isinstance(obj.get("type"), str) else None
    if (kind and kind.startswith(("response.", "error"))) or "sequence_number" in obj:
        return kind or name, _responses_line(obj)
    if kind:
        return kind, _anthropic_line(obj)
    if "choices" in obj:
        return str(obj.get("object") or "chunk"), _chat_line(obj)
    if "candidates" in obj or "usageMetadata" in obj:
        return "chunk", _gemini_line(obj)
    return name, _bedrock_line(obj)


def _join(*parts: str | None) -> str:
    return "  ".join(p for p in parts if p)


def _delta(value: Any) -> str | None:
    return _short(value) if isinstance(value, str) else None


def _responses_line(obj: dict[str, Any]) -> str:
    where = f"#{obj['output_index']}" if isinstance(obj.get("output_index"), int) else None
    item = obj.get("item")
    if isinstance(item, dict):
        if item.get("type") == "web_search_call":  # its id carries the vendor's search: too long to show
            action = item.get("action") if isinstance(item.get("action"), dict) else {}
            what = f"{str(item.get('id')).split('.')[0]} (web_search_call {_short(action.get('query'))})"
            return _join(where, what, item.get("status"))
        what = f"{item.get('id')} ({item.get('type')}{' ' + item['name'] if item.get('name') else ''})"
        return _join(where, what, item.get("status"))
    response = obj.get("response")
    if isinstance(response, dict):
        usage = response.get("usage")
        tokens = (f"in={usage.get('input_tokens')} out={usage.get('output_tokens')}"
                  if isinstance(usage, dict) else None)
        error = response.get("error")
        return _join(response.get("id"), response.get("status"), response.get("model"), tokens,
                     _short(error) if error else None)
    item_id = obj.get("item_id")
    preview = _delta(obj.get("delta")) or _delta(obj.get("text")) or _delta(obj.get("arguments"))
    if preview is None and isinstance(obj.get("part"), dict):
        preview = obj["part"].get("type")
    if obj.get("type") == "error" or ("message" in obj and "code" in obj):
        preview = _short(obj.get("message") or obj)
    return _join(where, item_id, preview)


def _anthropic_line(obj: dict[str, Any]) -> str:
    where = f"#{obj['index']}" if isinstance(obj.get("index"), int) else None
    if isinstance(obj.get("message"), dict):
        m = obj["message"]
        return _join(m.get("id"), m.get("model"))
    if isinstance(obj.get("content_block"), dict):
        block = obj["content_block"]
        return _join(where, block.get("type"), block.get("name") or block.get("id"))
    delta = obj.get("delta")
    if isinstance(delta, dict):
        if delta.get("stop_reason") or obj.get("usage"):
            usage = obj.get("usage") if isinstance(obj.get("usage"), dict) else {}
            return _join(f"stop_reason={delta.get('stop_reason')}",
                         f"out={usage['output_tokens']}" if "output_tokens" in usage else None)
        for key in ("text", "thinking", "partial_json"):
            if isinstance(delta.get(key), str):
                return _join(where, delta.get("type"), _short(delta[key]))
        if isinstance(delta.get("signature"), str):
            return _join(where, delta.get("type"), f"<{len(delta['signature'])} chars>")
        return _join(where, delta.get("type"))
    if isinstance(obj.get("error"), dict):
        return _short(obj["error"].get("message") or obj["error"])
    return where or ""


def _chat_line(obj: dict[str, Any]) -> str:
    choices = _list(obj.get("choices"))
    choice = choices[0] if choices and isinstance(choices[0], dict) else {}
    delta = choice.get("delta") if isinstance(choice.get("delta"), dict) else {}
    parts: list[str | None] = [f"#{choice['index']}" if isinstance(choice.get("index"), int) else None]
    for key in ("role",):
        if delta.get(key):
            parts.append(f"{key}={delta[key]}")
    for key in ("content", "reasoning_content", "reasoning", "refusal"):
        if isinstance(delta.get(key), str) and delta[key]:
            parts.append(f"{key if key != 'content' else 'text'} {_short(delta[key])}")
    for call in _list(delta.get("tool_calls")):
        if isinstance(call, dict):
            fn = call.get("function") if isinstance(call.get("function"), dict) else {}
            parts.append(_join(f"tool_call[{call.get('index')}]", call.get("id"), fn.get("name"),
                               _delta(fn.get("arguments"))))
    if choice.get("finish_reason"):
        parts.append(f"finish_reason={choice['finish_reason']}")
    if isinstance(obj.get("usage"), dict):
        parts.append(f"in={obj['usage'].get('prompt_tokens')} out={obj['usage'].get('completion_tokens')}")
    return _join(*parts)


def _gemini_line(obj: dict[str, Any]) -> str:
    candidates = _list(obj.get("candidates"))
    cand = candidates[0] if candidates and isinstance(candidates[0], dict) else {}
    content = cand.get("content") if isinstance(cand.get("content"), dict) else {}
    parts: list[str | None] = []
    for part in _list(content.get("parts")):
        if not isinstance(part, dict):
            continue
        if isinstance(part.get("text"), str):
            parts.append(("thought " if part.get("thought") else "text ") + _short(part["text"]))
        elif isinstance(part.get("functionCall"), dict):
            call = part["functionCall"]
            parts.append(_join("functionCall", call.get("name"), _short(call.get("args"))))
        else:
            parts.append(next(iter(part), "?"))
    if cand.get("finishReason"):
        parts.append(f"finishReason={cand['finishReason']}")
    usage = obj.get("usageMetadata")
    if isinstance(usage, dict):
        parts.append(f"in={usage.get('promptTokenCount')} out={usage.get('candidatesTokenCount')}")
    return _join(*parts)


def _bedrock_line(obj: dict[str, Any]) -> str:
    where = f"#{obj['contentBlockIndex']}" if isinstance(obj.get("contentBlockIndex"), int) else None
    start = obj.get("start")
    if isinstance(start, dict):
        tool = start.get("toolUse") if isinstance(start.get("toolUse"), dict) else {}
        kind = "toolUse" if tool else next(iter(start), None)
        return _join(where, kind, tool.get("name"), tool.get("toolUseId"))
    delta = obj.get("delta")
    if isinstance(delta, dict):
        if isinstance(delta.get("text"), str):
            return _join(where, "text", _short(delta["text"]))
        if isinstance(delta.get("toolUse"), dict):
            return _join(where, "toolUse", _delta(delta["toolUse"].get("input")))
        reasoning = delta.get("reasoningContent")
        if isinstance(reasoning, dict):
            if isinstance(reasoning.get("text"), str):
                return _join(where, "reasoning", _short(reasoning["text"]))
            return _join(where, "reasoning", *(f"{k} <{len(str(v))} chars>" for k, v in reasoning.items()))
        return _join(where, *delta)
    if obj.get("stopReason"):
        return f"stopReason={obj['stopReason']}"
    if isinstance(obj.get("usage"), dict):
        return f"in={obj['usage'].get('inputTokens')} out={obj['usage'].get('outputTokens')}"
    if isinstance(obj.get("message"), str):
        return _short(obj["message"])
    if "role" in obj:
        return f"role={obj['role']}"
    return where or _short({k: v for k, v in obj.items() if k != "p"})


def is_eventstream(data: bytes) -> bool:
    """An AWS event-stream starts with a big-endian frame length, never with text."""
    return len(data) >= 16 and data[:1] == b"\x00"


def stream_section(title: str, data: bytes) -> list[str]:
    """A heading, one line per event (or the pretty JSON / text of a whole body)."""
    if not data:
        return [f"── {title}: empty ──"]
    try:
        events = eventstream_events(data) if is_eventstream(data) else sse_events(data)
    except Exception as exc:  # a broken frame: say so, keep the rest of the view
        return [f"── {title}: {len(data):,} bytes, not readable as events: {exc} ──"]
    if not events or _json(data) is not None:
        return [f"── {title}: {len(data):,} bytes, not a stream ──", _pretty(data)]
    lines = [event_line(name, payload) for name, payload in events]
    counts = Counter(kind for kind, _ in lines)
    width = min(max(len(kind) for kind, _ in lines), 42)
    out = [f"── {title}: {len(events)} events, {len(data):,} bytes ──",
           *_wrap([f"{kind} ×{n}" for kind, n in counts.items()], "   "), ""]
    out += [f"{i:>4}  {kind:<{width}}  {rest}".rstrip() for i, (kind, rest) in enumerate(lines)]
    return out


class SSEEventsView(contentviews.Contentview):
    name = "SSE events"
    syntax_highlight = "none"

    def prettify(self, data: bytes, metadata: Metadata) -> str:
        info = _gateway(metadata)
        if info is None or not isinstance(metadata.http_message, http.Response) or metadata.flow is None:
            return "\n".join(stream_section("events", data))
        dialect = str(info.get("upstream") or "upstream")
        name = DIALECT_NAMES.get(dialect, dialect)
        upstream = metadata.flow.metadata.get(UPSTREAM_RESPONSE)
        out = [f"Responses <- {name}  ({info.get('model')})"]
        if info.get("error"):
            out.append(f"ERROR: {info['error']}")
        harmless = set(info.get("cosmetic") or ())
        dropped = list(info.get("dropped") or [])
        if lost := [path for path in dropped if path not in harmless]:
            out.append("dropped: " + ", ".join(lost))
        if shown := [path for path in dropped if path in harmless]:
            out.append("cosmetic: " + ", ".join(shown))
        if info.get("searches"):
            out.append(f"web searches: {info['searches']}")
        sections = [stream_section("what the client got (Responses)", data)]
        if isinstance(upstream, (bytes, str)):
            raw = upstream.encode() if isinstance(upstream, str) else upstream
            sections.append(stream_section(f"what the upstream sent ({name})", raw))
        else:
            sections.append(["── what the upstream sent: nothing kept (no upstream answer) ──"])
        out += [section[0].strip("─ ") for section in sections]  # both headings first: an overview
        for section in sections:
            out += ["", *section]
        return "\n".join(out)

    def render_priority(self, data: bytes, metadata: Metadata) -> float:
        if not isinstance(metadata.http_message, http.Response):
            return -1
        if _gateway(metadata) is not None:
            return 3
        return 2 if metadata.content_type == "text/event-stream" else -1


VIEWS = (TranslationView, SSEEventsView)


def register() -> None:
    """Add both views to mitmproxy's registry (adding again replaces them, so reloads are fine)."""
    for view in VIEWS:
        contentviews.add(view)


class Views:
    """An addon whose only job is to register the views when mitmproxy loads it."""

    def load(self, loader: Any) -> None:
        register()


addons = [Views()]
