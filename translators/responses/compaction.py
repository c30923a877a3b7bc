"""The answer to a remote-compaction request, from the summarizer's stream.

Codex needs `response.completed` with exactly one `compaction` output item, takes no other item
into account, and fails the compaction on zero or two (docs/codex.md). So the summarizer's text
is collected, not streamed, and written at the end as that one item; reasoning and anything else
the upstream says is absorbed. Usage is the upstream's own: reported too high, Codex would compact
again at once. The per-event fast path of `ResponsesEncoder` is not used here: a compaction is
one answer per long session, and its deltas go nowhere.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from translators import compaction
from translators.ids import IdFactory
from translators.ir import events as ev
from translators.naming import ToolIndex
from translators.report import Report
from translators.responses.stream import ResponsesEncoder

_ABSORBED = (ev.TextDone, ev.ReasoningDelta, ev.ReasoningDone, ev.ToolCallStarted, ev.ToolCallDelta,
             ev.ToolCallDone)
_ACCEPTED_FINISH = {"stop", "tool_calls", "max_output_tokens"}
"""Finish reasons after which the text is a summary; `max_output_tokens` gives a cut one, still
more use to the next turn than a failed compaction (noted)."""


class CompactionEncoder(ResponsesEncoder):
    def __init__(self, *, dialect: str, upstream_model: str, model: str, report: Report, new_id: IdFactory,
                 clock: Callable[[], float] = time.time, echo: dict[str, Any] | None = None) -> None:
        super().__init__(model=model, tools=ToolIndex(), report=report, new_id=new_id, clock=clock, echo=echo)
        self.dialect = dialect
        self.upstream_model = upstream_model
        self._texts: dict[object, list[str]] = {}
        """Text per upstream block, in the order the blocks began."""

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
