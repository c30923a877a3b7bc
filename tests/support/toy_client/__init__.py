"""A toy client dialect, defined outside the package: what a second client takes to be served
(docs/architecture.md "The client side").

Its wire: `POST /toy/generate` with `{"model": ..., "prompt": "...", "stream": false}` answered
`{"text": "..."}`; with `"stream": true`, one JSON line per text delta `{"delta": "..."}` and a
last line `{"done": true, "text": "..."}`. Its errors: `{"problem": {"status": N, "code": ...,
"why": ...}}`. Registered by naming this module in `$GATEWAY_DIALECTS`, which reads
`CLIENT_DIALECT`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from translators.client_dialects import ClientDialect
from translators.core.errors import MalformedRequest, TranslatorError
from translators.core.translation import Translation
from translators.ir import events as ev
from translators.ir.encoder import EventEncoder
from translators.ir.request import Message, Request, Text
from translators.report import Report  # the public plugin name (translators/report.py)

NAME = "toy"
PATH = "/toy/generate"
_READ = frozenset({"model", "prompt", "stream"})
_ITEM_EVENTS = (ev.TextDelta, ev.TextDone, ev.ReasoningDelta, ev.ReasoningDone, ev.ToolCallStarted,
                ev.ToolCallDelta, ev.ToolCallDone, ev.WebSearch, ev.Citation, ev.Finished, ev.Failed)


def decode(body: Any, report: Report) -> Request:
    if not isinstance(body, dict):
        raise MalformedRequest("the request body must be a JSON object")
    model, prompt = body.get("model"), body.get("prompt")
    if not isinstance(model, str) or not model:
        raise MalformedRequest("model must be a non-empty string", param="model")
    if not isinstance(prompt, str) or not prompt:
        raise MalformedRequest("prompt must be a non-empty string", param="prompt")
    for key in body:
        if key not in _READ:
            report.drop(key)  # every other field is reported, never dropped silently
    return Request(model=model, items=[Message(role="user", parts=[Text(text=prompt)])],
                   stream=bool(body.get("stream")))


def problem(status: int, code: str, message: str) -> dict[str, Any]:
    return {"problem": {"status": status, "code": code, "why": message}}


def refusal(exc: TranslatorError) -> tuple[int, dict[str, Any]]:
    return exc.status, problem(exc.status, exc.code, exc.message)


class ToyEncoder(EventEncoder):
    """IR events -> the toy's JSON lines (streamed) or its one answer object (`response`)."""

    def __init__(self, translation: Translation, report: Report, new_id: Callable[..., str],
                 clock: Callable[[], float]) -> None:
        self.finished = False
        self._out: list[bytes] = []
        self._text: list[str] = []
        self._error: dict[str, Any] | None = None
        self._stream = translation.stream
        self.report = report

    def encode_parts(self, events: list[ev.Event]) -> list[bytes]:
        for event in events:
            if isinstance(event, _ITEM_EVENTS) and not self.finished:
                self._item(event)
        out, self._out = self._out, []
        return out

    def _line(self, payload: dict[str, Any]) -> None:
        if self._stream:
            self._out.append(json.dumps(payload).encode() + b"\n")

    def response(self) -> dict[str, Any]:
        if self._error is not None:
            return {"problem": self._error}
        return {"text": "".join(self._text)}

    def _text_delta(self, key: object, text: str) -> None:
        self._text.append(text)
        self._line({"delta": text})

    def _finish(self, reason: str, detail: str | None) -> None:
        self.finished = True
        self._line({"done": True, "text": "".join(self._text)})

    def _fail(self, code: str, message: str) -> None:
        self.finished = True
        self._error = {"status": 502, "code": code, "why": message}
        self._line({"problem": self._error})

    def _close(self, key: object) -> None:
        pass

    def _reasoning_delta(self, key: object, text: str) -> None:
        pass  # the toy shows no reasoning

    def _reasoning_done(self, key: object, state: Any) -> None:
        pass

    def _call_started(self, key: object, call_id: str, name: str) -> None:
        pass  # the toy declares no tools: no call comes back

    def _call_delta(self, key: object, fragment: str) -> None:
        pass

    def _call_done(self, key: object, arguments: str | None) -> None:
        pass

    def _web_search(self, search: ev.WebSearch) -> None:
        pass

    def _cite(self, citation: ev.Citation) -> None:
        pass


CLIENT_DIALECT = ClientDialect(
    name=NAME, decode=decode, error_body=problem, error_status=lambda status, _body: status,
    refusal=refusal, echo=lambda _body: {}, answer_status=lambda body: 502 if "problem" in body else 200,
    paths=(PATH,), turn_paths=(PATH,), label="Toy", encoder=ToyEncoder)
