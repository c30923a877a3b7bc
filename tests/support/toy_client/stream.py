"""IR events -> the toy's JSON lines (streamed: `{"delta": ...}` per text delta, a last
`{"done": true, "text": ...}`) or its one answer object (`response()`: `{"text": ...}`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.support.toy_client.errors import line
from translators.core.translation import Translation
from translators.ir import events as ev
from translators.ir.encoder import EventEncoder
from translators.report import Report

_ITEM_EVENTS = (ev.TextDelta, ev.TextDone, ev.ReasoningDelta, ev.ReasoningDone, ev.ToolCallStarted,
                ev.ToolCallDelta, ev.ToolCallDone, ev.WebSearch, ev.Citation, ev.Finished, ev.Failed)


class ToyEncoder(EventEncoder):
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
            self._out.append(line(payload))

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
