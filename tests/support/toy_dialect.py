"""A toy dialect, defined outside the package the way a fifth vendor would be, to prove that a new
dialect is one folder plus its tests: the shared credential, fault and views suites run over it,
and nothing in `addon/` knows it (docs/adding-a-dialect.md).

The "lines" protocol: `POST {base}/lines/generate` with `{"model", "stream", "system": [...],
"lines": [{"role", "text"}]}` and the key in `x-lines-key`. A stream is one JSON array per line
(`application/x-ndjson`): `["text", "..."]` lines, then `["done", "stop", in, out]`; an
`["error", "..."]` line fails it. A whole answer is one `{"text", "done", "in", "out"}` object;
an error body is `{"error": "..."}`. Only text goes upstream: every other item, part and tool is
reported dropped.

The registry entry is `DIALECT`; `register()` adds it in this process (tests/conftest.py), and a
mitmdump started with `GATEWAY_DIALECTS=tests.support.toy_dialect` imports it (addon/routes/plugins.py).
`SAMPLE` is its conformance data: what the shared suites' local upstream answers for it, its
route and key (tests/support/conformance/).
"""

from __future__ import annotations

import json
from typing import Any

from tests.support import conformance
from translators import dialect as dialects
from translators.core.capabilities import ModelCapabilities
from translators.core.errors import UpstreamProtocolError
from translators.core.translation import Encoded, Translation
from translators.dialect import Codec, Dialect, ErrorInfo, RequestShape, Vendor, View
from translators.ir import events as ev
from translators.ir.request import Message, Request, Text
from translators.report import Report  # the public plugin name (translators/report.py)
from translators.wire.upstream_errors import code_for, text_of
from translators.wire.viewtext import as_list, join, short

NAME = "lines"
PATH = "/lines/generate"
KEY_HEADER = "x-lines-key"
_FINISH = {"stop": "stop", "length": "max_output_tokens"}


def encode(request: Request, model: str, report: Report, caps: ModelCapabilities) -> Encoded:
    lines = []
    for n, item in enumerate(request.items):
        if not isinstance(item, Message) or not all(isinstance(p, Text) for p in item.parts):
            report.drop(item.origin or f"input[{n}]")
            continue
        lines.append({"role": item.role, "text": "".join(p.text for p in item.parts if isinstance(p, Text))})
    for tool in request.tools:
        report.drop(tool.origin or f"tools.{tool.name}")
    body = {"model": model, "stream": request.stream, "system": list(request.system), "lines": lines}
    return Encoded(path=PATH, body=body)


class LinesDecoder:
    def __init__(self) -> None:
        self._rest = b""
        self._started = False
        self._text = False

    def feed(self, data: bytes) -> list[ev.Event]:
        *whole, self._rest = (self._rest + data).split(b"\n")
        out: list[ev.Event] = []
        for line in whole:
            if line.strip():
                out += self._line(line)
        return out

    def close(self) -> list[ev.Event]:
        rest, self._rest = self._rest, b""
        if rest.strip():
            raise UpstreamProtocolError("the lines stream ended in the middle of a line")
        return []

    def _line(self, line: bytes) -> list[ev.Event]:
        try:
            event = _event(json.loads(line))
        except ValueError as exc:
            raise UpstreamProtocolError(f"a lines event cannot be read: {exc}") from None
        return self.event(event)

    def event(self, obj: dict[str, Any]) -> list[ev.Event]:
        out: list[ev.Event] = []
        if not self._started:
            self._started = True
            out.append(ev.Started())
        if isinstance(obj.get("error"), str):
            return [*out, ev.Failed(code_for(500, obj["error"]), obj["error"])]
        if isinstance(obj.get("text"), str):
            self._text = True
            out.append(ev.TextDelta(0, obj["text"]))
        if isinstance(obj.get("done"), str):
            if self._text:
                out.append(ev.TextDone(0))
            out.append(ev.Usage(input_tokens=obj.get("in"), output_tokens=obj.get("out")))
            out.append(ev.Finished(_FINISH.get(obj["done"], "stop")))
        return out


def _event(value: Any) -> dict[str, Any]:
    """`["text", t]`, `["done", reason, in, out]`, `["error", message]` -> the same as an object."""
    if not isinstance(value, list) or not value or not isinstance(value[0], str):
        raise ValueError("not a [kind, ...] array")
    kind, *rest = value
    if kind == "text" and len(rest) == 1:
        return {"text": rest[0]}
    if kind == "done" and len(rest) == 3:
        return {"done": rest[0], "in": rest[1], "out": rest[2]}
    if kind == "error" and len(rest) == 1:
        return {"error": rest[0]}
    raise ValueError(f"unknown lines event {kind!r}")


def response_events(body: Any, translation: Translation) -> list[ev.Event]:
    if not isinstance(body, dict):
        raise UpstreamProtocolError("the lines answer is not an object")
    return LinesDecoder().event(body)


def error_info(status: int, body: Any) -> ErrorInfo:
    given = body.get("error") if isinstance(body, dict) else None
    message = given if isinstance(given, str) else text_of(body)
    return ErrorInfo(code_for(status, message), message or f"HTTP {status}")


def capabilities(model: str) -> ModelCapabilities:
    return ModelCapabilities(model=model, source="table")


# -- how mitmweb shows it ---------------------------------------------------------------------------
def read_request(body: dict[str, Any]) -> RequestShape:
    system = as_list(body.get("system"))
    items = [f"{line.get('role')}[text]" for line in as_list(body.get("lines")) if isinstance(line, dict)]
    return RequestShape(f"system: {len(system)} line(s)" if system else "none", items, [],
                        frozenset({"system", "lines"}))


def event_line(name: str, obj: dict[str, Any]) -> tuple[str, str]:
    if "done" in obj:
        return "done", join(f"done={obj['done']}", f"in={obj.get('in')} out={obj.get('out')}")
    if "error" in obj:
        return "error", short(obj["error"])
    return "text", short(obj.get("text"))


def frames(data: bytes) -> list[tuple[str, str]] | None:
    """A body of `[kind, ...]` lines -> (kind, the event as a JSON object); None for another body."""
    try:
        events = [_event(json.loads(line)) for line in data.split(b"\n") if line.strip()]
    except ValueError:
        return None
    return [(next(iter(e)), json.dumps(e)) for e in events] or None


DIALECT = Dialect(
    name=NAME,
    vendor=Vendor(
        display_name="Lines (toy)",
        base_url="https://api.lines.example",
        key_env="LINES_API_KEY",
        key_headers=lambda key: {KEY_HEADER: key},
        secret_headers=(KEY_HEADER,),
        stream_content_type="application/x-ndjson",
        capture_suffix="ndjson",
    ),
    view=View(read_request=read_request, event_line=event_line,
              claims=lambda obj: bool({"text", "done"} & obj.keys()) and "type" not in obj, frames=frames),
    codec=Codec(
        encode_request=encode,
        stream_decoder=lambda translation: LinesDecoder(),
        response_events=response_events,
        error_info=error_info,
        capabilities=capabilities,
    ),
)


def register() -> Dialect:
    """The dialect, and its data for the shared suites (tests/support/conformance/)."""
    conformance.register(SAMPLE)
    return dialects.register(DIALECT)


# -- what the shared suites' local upstream answers (tests/support/conformance/) -------------------
def _huge(base: list[bytes], size: int, piece: str) -> list[bytes]:
    return [*[json.dumps(["text", piece]).encode() + b"\n" for _ in range(size // len(piece))], *base]


SAMPLE = conformance.Conformance(
    dialect=NAME,
    model="lines-1",
    key_env="RELIABILITY_LINES_KEY",
    key="lines-reliability-UPSTREAM-toy-key-0123456789",
    key_header=(KEY_HEADER, "{key}"),
    is_mine=lambda path: path.split("?")[0].endswith(PATH),
    error=lambda status, message: ({}, json.dumps({"error": message}).encode()),
    stream=tuple(json.dumps(e).encode() + b"\n" for e in (
        ["text", "Hello"], ["text", " from"], ["text", " lines."], ["done", "stop", 3, 3])),
    whole={"text": "Hello whole.", "done": "stop", "in": 3, "out": 2},
    content_type="application/x-ndjson",
    models=("lines-1",),
    huge=_huge,
)
