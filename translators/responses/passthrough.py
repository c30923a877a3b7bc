"""The Responses target: the body goes upstream as the client wrote it, but for what must not.

Custom tool declarations, namespaces and everything else stay verbatim (OpenAI reads them);
`client_metadata` never leaves (installation and session ids); reasoning state this gateway
wrote for another vendor is stripped, since OpenAI cannot read it, and a compaction item the
gateway wrote becomes the summary as a user message (OpenAI refuses foreign `encrypted_content`
with `invalid_encrypted_content`). OpenAI's own compaction items and triggers pass untouched.
"""

from __future__ import annotations

from typing import Any

from translators.core.errors import MalformedRequest, UpstreamProtocolError
from translators.core.report import Report
from translators.core.translation import Encoded, Translation
from translators.features import compaction, vendor_state
from translators.ir import events as ev
from translators.wire import wirejson
from translators.wire.response_object import response_object
from translators.wire.sse import SSEDecoder, SSEEvent, encode_event

_TERMINAL = {"response.completed", "response.failed", "response.incomplete"}
_OPENING = {"response.created", "response.in_progress", "response.queued", "error"}
"""Events before the answer itself (`error` precedes OpenAI's own `response.failed`)."""


def encode(body: Any, model: str | None, report: Report) -> Encoded:
    if not isinstance(body, dict) or not isinstance(body.get("model"), str):
        raise MalformedRequest("the request body must be a JSON object with a model", param="model")
    out = body
    if "client_metadata" in body or (model and model != body["model"]):
        out = {k: v for k, v in body.items() if k != "client_metadata"}
        if model:
            out["model"] = model
    items = out.get("input")
    if isinstance(items, list) and any(_ours(i) for i in items):
        out = {**out, "input": [_strip(i, f"input[{n}]", report) for n, i in enumerate(items)]}
        out["input"] = [i for i in out["input"] if i is not None]
    return Encoded(path="/responses", body=out)


def _ours(item: Any) -> bool:
    if not isinstance(item, dict) or not isinstance(item.get("type"), str):
        return False  # OpenAI judges it
    if item.get("type") in compaction.ITEM_TYPES:
        return compaction.is_ours(item.get("encrypted_content"))
    return item.get("type") == "reasoning" and vendor_state.is_ours(item.get("encrypted_content"))


def _strip(item: Any, path: str, report: Report) -> Any:
    if not _ours(item):
        return item
    if item.get("type") in compaction.ITEM_TYPES:
        text = compaction.replay_item(item, path, report)
        if text is None:
            return None
        return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
    report.drop(f"{path}.encrypted_content")
    if not item.get("summary") and not item.get("content"):
        return None
    return {k: v for k, v in item.items() if k != "encrypted_content"}


class Passthrough:
    """Responses SSE -> the same events, re-framed whole, with exactly one terminal event."""

    def __init__(self, translation: Translation, report: Report) -> None:
        self._sse = SSEDecoder()
        self._report = report
        self._model = translation.client_model
        self._created: dict[str, Any] = {}
        self._forwarded = 0
        self.finished = False
        self.content_started = False
        """An event of the answer itself has been forwarded (`_OPENING` are not), as
        `StreamTranslator.content_started`."""
        self.early_failure: ev.Failed | None = None
        """The failure that ended the stream before any content."""
        self.progress = 0
        """Events forwarded, keep-alives not counted (`StreamTranslator.progress`)."""

    def feed(self, data: bytes) -> bytes:
        try:
            events = self._sse.feed(data)
        except UpstreamProtocolError as exc:  # e.g. an event past the size bound
            return self._fail(exc)
        return self._frame(events)

    def close(self) -> bytes:
        try:
            events = self._sse.close()
        except UpstreamProtocolError as exc:
            return self._fail(exc)
        out = self._frame(events)
        if not self.finished:
            self.finished = True
            out += self._failed("upstream stream ended before response.completed")
        return out

    def _frame(self, events: list[SSEEvent]) -> bytes:
        out = []
        for event in events:
            if self.finished or event.data == "[DONE]":
                continue
            try:
                payload = wirejson.loads(event.data)
            except (ValueError, RecursionError):
                payload = None
            name = payload.get("type") if isinstance(payload, dict) else None
            if not isinstance(name, str):
                # the openai SDK raises on such a line: report it, keep the stream readable
                self._report.drop(f"output.event[{self._forwarded}]")
                continue
            # the payload's own type decides, not the `event:` line (a mangled event line must
            # not end the stream early)
            self._observe(name, payload)
            if name in _TERMINAL:
                self.finished = True
            elif name == "response.created" and isinstance(payload.get("response"), dict):
                self._created = payload["response"]
            self._forwarded += 1
            # every line of a multi-line data field needs its own `data: ` prefix (WHATWG §9.2.6)
            lines = "".join(f"data: {line}\n" for line in event.data.split("\n"))
            out.append(f"event: {name}\n{lines}\n".encode())
        return b"".join(out)

    def _observe(self, name: str, payload: dict[str, Any]) -> None:
        if name == "keepalive":
            return
        self.progress += 1
        if self.content_started or name in _OPENING:
            return
        if name == "response.failed":
            response = payload.get("response")
            error = response.get("error") if isinstance(response, dict) else None
            error = error if isinstance(error, dict) else {}
            code, message = error.get("code"), error.get("message")
            self.early_failure = ev.Failed(code if isinstance(code, str) else "server_error",
                                           message if isinstance(message, str) else name)
            return
        self.content_started = True

    def _fail(self, exc: UpstreamProtocolError) -> bytes:
        if self.finished:
            return b""
        self.finished = True
        # the code rides in the message, as the encoder writes any code the client does not know
        return self._failed(f"{exc.code}: {exc.message}")

    def _failed(self, message: str) -> bytes:
        """A `response.failed` the client can parse: a whole Response, numbered after the last
        forwarded event (OpenAI numbers events from 0, one by one)."""
        if not self.content_started and self.early_failure is None:
            self.early_failure = ev.Failed("server_error", message)
        created = self._created
        created_at = created.get("created_at")
        response = response_object(
            created.get("id") if isinstance(created.get("id"), str) else "resp_gateway",
            created_at if isinstance(created_at, int | float) else 0,
            "failed",
            created.get("model") if isinstance(created.get("model"), str) else self._model,
            [],
            error={"code": "server_error", "message": message})
        return encode_event("response.failed", {"type": "response.failed", "sequence_number": self._forwarded,
                                                "response": response})


def response_events(body: Any, translation: Translation) -> list[ev.Event]:
    raise NotImplementedError  # the Responses target passes whole bodies through untouched
