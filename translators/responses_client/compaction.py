"""The answer to a compaction request, from the summarizer's stream, in its final shape.

Codex needs `response.completed` with exactly one `compaction` output item, takes no other item
into account, and fails the compaction on zero or two (docs/compaction.md "Codex's contract"). So
the summarizer's text is collected, not streamed, and written at the end as that one item;
reasoning and anything else the upstream says is absorbed. Usage is the upstream's own: reported
too high, Codex would compact again at once. The per-event fast path of `ResponsesEncoder` is not
used here: a compaction is one answer per long session, and its deltas go nowhere.

Two forms (docs/compaction.md "Two forms"): Codex's trigger gets a Responses stream (or object);
a body posted to `/responses/compact` gets the whole `response.compaction` object, the history's
user messages and then the one item (`kept`), or an error body when no summary came.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from translators.core.ids import IdFactory
from translators.core.report import Report
from translators.features import compaction
from translators.features.naming import ToolIndex
from translators.ir import events as ev
from translators.responses_client.stream import ResponsesEncoder

_ABSORBED = (ev.TextDone, ev.ReasoningDelta, ev.ReasoningDone, ev.ToolCallStarted, ev.ToolCallDelta,
             ev.ToolCallDone)
_ACCEPTED_FINISH = {"stop", "stop_sequence", "tool_calls", "max_output_tokens"}
"""Finish reasons after which the text is a summary; `max_output_tokens` gives a cut one, still
more use to the next turn than a failed compaction (noted). `stop_sequence` is a stop an upstream
names as such (a Bedrock model's own stop sequence)."""


def kept_messages(value: Any) -> list[dict[str, Any]]:
    """The user messages of a request's `input` (a string is one), which the compaction object
    keeps before its compaction item (the openai SDK's `CompactedResponse.output`: "all user
    messages, followed by a single compaction item"), as output items but for a missing id
    (`CompactionEncoder` gives one)."""
    if isinstance(value, str):
        value = [{"role": "user", "content": value}]
    if not isinstance(value, list):
        return []
    return [_output_message(item) for item in value if isinstance(item, dict)
            and item.get("type", "message") == "message" and item.get("role") == "user"]


def _output_message(item: dict[str, Any]) -> dict[str, Any]:
    """A user message as an output item: its text content as parts and a status (the SDK's
    `Message` requires both); a message that has them keeps its own."""
    out = {**item, "type": "message"}
    if isinstance(out.get("content"), str):
        out["content"] = [{"type": "input_text", "text": out["content"]}]
    out.setdefault("status", "completed")
    return out


def _no_usage() -> dict[str, Any]:
    """The compaction object's `usage` when the upstream reported none (the SDK requires it)."""
    return {"input_tokens": 0, "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": 0, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 0}


class CompactionEncoder(ResponsesEncoder):
    def __init__(self, *, dialect: str, upstream_model: str, model: str, report: Report, new_id: IdFactory,
                 clock: Callable[[], float] = time.time, echo: dict[str, Any] | None = None,
                 kept: list[dict[str, Any]] | None = None) -> None:
        """`kept`: the `/responses/compact` form (`Translation.compaction_kept`); None: Codex's."""
        super().__init__(model=model, tools=ToolIndex(), report=report, new_id=new_id, clock=clock, echo=echo)
        self.dialect = dialect
        self.upstream_model = upstream_model
        self._texts: dict[object, list[str]] = {}
        """Text per upstream block, in the order the blocks began."""
        self._kept = None if kept is None else [
            message if message.get("id") else {**message, "id": new_id("msg")} for message in kept]

    def response(self) -> dict[str, Any]:
        """Codex's form: the Responses object. The `/responses/compact` form: the whole
        `response.compaction` object once the summary is written, else the error body of the failed
        compaction (a 500, `translators/client_dialects.py` `answer_status`)."""
        if self._kept is None:
            return super().response()
        if self.status != "completed":
            why = (self.error or {}).get("message") or f"no summary ({self.status})"
            message = why if "compaction failed" in why else f"compaction failed: {why}"
            return {"error": {"type": "server_error", "code": "server_error", "message": message,
                              "param": None}}
        return {"id": self.response_id, "object": "response.compaction", "created_at": self.created_at,
                "output": [*self._kept, *self.output], "usage": self._usage_body() or _no_usage()}

    def encode_parts(self, events: list[ev.Event]) -> list[bytes]:
        for event in events:
            if isinstance(event, (ev.TextDelta, *_ABSORBED)):
                if self.finished:
                    continue
                if not self._started:
                    self._start()
                if isinstance(event, ev.TextDelta):
                    self._texts.setdefault(event.key, []).append(event.text)
                elif isinstance(event, ev.ToolCallStarted):
                    self.report.note(f"compaction: the summarizer called {event.name!r}; ignored")
            elif isinstance(event, ev.Finished):
                if not self.finished:
                    self._summarize(event.reason, event.detail)
            else:
                self._handle(event)
        out, self._out = self._out, []
        return out

    def _summarize(self, reason: str, detail: str | None) -> None:
        if not self._started:
            self._start()
        if reason == "context_length_exceeded":
            self._finish(reason, detail)  # the code Codex knows, as on any turn
            return
        if reason not in _ACCEPTED_FINISH:
            self._fail("server_error", f"compaction failed: the summarizer stopped ({reason}: {detail})")
            return
        text = "\n\n".join("".join(chunks) for chunks in self._texts.values()).strip()
        if not text:
            source = f"{self.dialect} {self.upstream_model}"
            self._fail("server_error", f"compaction failed: {source} returned an empty summary")
            return
        if reason == "max_output_tokens":
            self.report.note("compaction: the summary was cut at the output token limit")
        summary = compaction.Summary(summary=text, dialect=self.dialect, model=self.upstream_model)
        item = {"type": "compaction", "id": self.new_id("cmp"),
                "encrypted_content": compaction.encode(summary)}
        self._emit("response.output_item.added", {"output_index": 0, "item": item})
        self._emit("response.output_item.done", {"output_index": 0, "item": item})
        self.output.append(item)
        self.finished = True
        self.status = "completed"
        self._emit("response.completed", {"response": self.response()})
