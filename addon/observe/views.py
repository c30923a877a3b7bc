"""mitmproxy content views that make a gateway flow readable in mitmweb and mitmproxy's console.

mitmweb does not show `flow.metadata` (docs/mitmproxy.md "Where flows show information"), where the addon
keeps the client's
original request and the upstream's raw answer; these views render them next to the bodies:

- **Translation** (auto on the request of a gateway flow): what changed between the client's
  Responses request and the upstream request (model, system, items, tools, top-level fields),
  with the dropped paths and notes first, then both bodies in full.
- **SSE events** (auto on the response of a gateway flow, and on any `text/event-stream` body):
  one line per event (type, item, delta preview) for what the client got and, under its own
  heading, for what the upstream sent (SSE, or a dialect's own binary framing).

The addon registers them with `addons = [Gateway(), views.Views()]`; `-s addon/observe/views.py` on its
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

from addon.observe.flowinfo import CLIENT_REQUEST, KEY, TRANSLATION, UPSTREAM_RESPONSE
from addon.serve import client_side as client_dialects
from translators import dialect as dialects
from translators.wire.viewtext import brief_data, short, sse_events, text

WIDTH = 80
"""Lines of names are wrapped at about this width."""


def display_name(dialect: str) -> str:
    found = dialects.find(dialect)
    return found.vendor.display_name if found else dialect


# -- small helpers ------------------------------------------------------------------------------
def _gateway(metadata: Metadata) -> dict[str, Any] | None:
    flow = metadata.flow
    info = flow.metadata.get(KEY) if flow is not None else None
    return info if isinstance(info, dict) else None


_text = text
_short = short


def _json(value: bytes | str | None) -> Any:
    try:
        return json.loads(_text(value))
    except ValueError:
        return None


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
    """What the Translation view compares, read off one request body of one dialect
    (`View.read_request` of `translators/<dialect>/view.py`)."""

    def __init__(self, dialect: str, body: Any, model: str | None = None) -> None:
        self.dialect = dialect
        self.body = body if isinstance(body, dict) else {}
        self.model: str | None = self.body.get("model") if isinstance(self.body.get("model"), str) else model
        found = dialects.find(dialect)
        if found is None or found.view is None:  # said, never rendered as another dialect
            self.system = f"(no view for dialect {dialect!r})"
            self.items: list[str] = []
            self.tools: list[str] = []
            self.tools_from = ()
            self.consumed: set[str] = {"model"}
        else:
            shape = found.view.read_request(self.body)
            self.system, self.items, self.tools = shape.system, shape.items, shape.tools
            self.tools_from: tuple[str, ...] = shape.tools_from
            self.consumed = {"model", *shape.consumed}
        self.fields = {k: v for k, v in self.body.items() if k not in self.consumed}


# -- the Translation view -----------------------------------------------------------------------
def translation_text(upstream_body: bytes, flow_metadata: dict[str, Any]) -> str:
    info = flow_metadata.get(KEY) if isinstance(flow_metadata.get(KEY), dict) else {}
    translation = flow_metadata.get(TRANSLATION) if isinstance(flow_metadata.get(TRANSLATION), dict) else None
    client_raw = _text(flow_metadata.get(CLIENT_REQUEST))
    client = _json(client_raw)
    dialect = str((translation or {}).get("target") or info.get("upstream") or "?")
    name = display_name(dialect)
    label, view = client_dialects.viewed(flow_metadata)  # Responses, or e.g. Claude Code's Messages

    out = [f"{label} -> {name}  ({info.get('client_model')} -> {info.get('model')})"]
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
        # the kind as addon/observe/flowinfo.py counts it: a flow saved without kinds has lossy drops only
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
        out += ["", f"── client request ({label}, {len(client_raw):,} bytes) ──", _pretty(client_raw)]
        return "\n".join(out)

    before = Shape(view, client)
    after = Shape(dialect, _json(upstream_body), model=str(translation.get("model") or ""))
    out.append(f"{'':<10}client ({label})  ->  upstream ({name})")
    out.append(f"{'model':<10}{before.model}  ->  {after.model}")
    out.append(f"{'system':<10}{before.system}")
    out.append(f"{'':<10}->  {after.system}")
    out.append(f"{'items':<10}{len(before.items)}: {_runs(before.items)}")
    out.append(f"{'':<10}->  {len(after.items)}: {_runs(after.items)}")
    out += _tools_diff(before.tools, after.tools, translation, before.tools_from)
    out += _fields_diff(before.fields, after.fields)
    out += ["", f"── client request ({label}, {len(client_raw):,} bytes) ──", _pretty(client_raw),
            "", f"── upstream request ({name}, {len(upstream_body):,} bytes) ──", _pretty(upstream_body)]
    return "\n".join(out)


def _tools_diff(before: list[str], after: list[str], translation: dict[str, Any],
                declared_in: tuple[str, ...] = ()) -> list[str]:
    """`declared_in`: where the client declared tools besides a top-level `tools` list (a Lite
    request's `additional_tools` item): said, so they never read as tools the gateway added."""
    by_wire = ((translation.get("tools") or {}).get("by_wire") or {}) if isinstance(
        translation.get("tools"), dict) else {}
    source = f" (declared in {', '.join(declared_in)})" if declared_in else ""
    out = [f"{'tools':<10}{len(before)}{source}  ->  {len(after)}"]
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
    # a file's base64 is shown by its size, never whole (translators/wire/viewtext.py `brief_data`)
    return json.dumps(brief_data(value), indent=2, ensure_ascii=False)


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
def event_line(name: str, payload: str, dialect: str | None = None) -> tuple[str, str]:
    """(type, `where | preview`) for one event: the line of `dialect` when the event is one of its
    own, else of the first dialect that claims it (a stream of unknown dialect)."""
    obj = _json(payload)
    if not isinstance(obj, dict):
        return name, _short(payload)
    own = dialects.find(dialect) if dialect else None
    for found in (own, *dialects.every()):
        if found is not None and found.view is not None and found.view.claims(obj):
            return found.view.event_line(name, obj)
    return name, _short(payload)


def split_events(data: bytes, dialect: str | None = None) -> list[tuple[str, str]]:
    """(event name, payload) per event: the dialect's own binary framing when the body is in it
    (any dialect's when the dialect is unknown), else server-sent events."""
    own = dialects.find(dialect) if dialect else None
    for found in ([own] if own is not None else dialects.every()):
        if found.view is not None and found.view.frames is not None:
            events = found.view.frames(data)
            if events is not None:
                return events
    return sse_events(data)


def stream_section(title: str, data: bytes, dialect: str | None = None) -> list[str]:
    """A heading, one line per event (or the pretty JSON / text of a whole body)."""
    if not data:
        return [f"── {title}: empty ──"]
    try:
        events = split_events(data, dialect)
    except Exception as exc:  # a broken frame: say so, keep the rest of the view
        return [f"── {title}: {len(data):,} bytes, not readable as events: {exc} ──"]
    if not events or _json(data) is not None:
        return [f"── {title}: {len(data):,} bytes, not a stream ──", _pretty(data)]
    lines = [event_line(name, payload, dialect) for name, payload in events]
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
        name = display_name(dialect)
        upstream = metadata.flow.metadata.get(UPSTREAM_RESPONSE)
        label, view = client_dialects.viewed(metadata.flow.metadata)
        out = [f"{label} <- {name}  ({info.get('model')})"]
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
        sections = [stream_section(f"what the client got ({label})", data, view)]
        if isinstance(upstream, (bytes, str)):
            raw = upstream.encode() if isinstance(upstream, str) else upstream
            sections.append(stream_section(f"what the upstream sent ({name})", raw, dialect))
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
