"""Claude's server-side web search in a Messages stream -> `WebSearch` and `Citation` events
(docs/anthropic.md "Streaming"; anthropic SDK `ServerToolUseBlock`, `WebSearchToolResultBlock`,
`CitationsWebSearchResultLocation`).

A search is a `server_tool_use` block (name `web_search`, its `{query}` input streamed as
`input_json_delta`) and a `web_search_tool_result` block whose content arrives whole at its start.
Once a stream searches, Claude writes its answer as a run of text blocks, one per cited stretch,
each cited block opening with its `citations_delta` events: the run becomes one message (the text
blocks share its key, and it closes when another kind of block starts or the message ends), and
each citation covers its block's characters within the run. Both search blocks, verbatim, are
what Claude needs on the next turn to take the search back: they travel in the event's state.
"""

from __future__ import annotations

import json
from typing import Any

from translators.ir import events as ev
from translators.ir.request import VendorState


class Searches:
    """The web searches and the cited text run of one Anthropic stream."""

    __slots__ = ("_citations", "_inputs", "_keys", "_run", "_run_len", "_starts", "_uses", "merging")

    def __init__(self) -> None:
        self.merging = False
        """On once the stream searched or cites: consecutive text blocks make one message."""
        self._uses: dict[Any, dict[str, Any]] = {}
        """server_tool_use blocks by index, until their result arrives."""
        self._inputs: dict[Any, list[str]] = {}
        self._keys: dict[Any, Any] = {}
        """Text block index -> the key of the run it belongs to."""
        self._run: Any = None
        self._run_len = 0
        self._starts: dict[Any, int] = {}
        self._citations: dict[Any, list[dict[str, Any]]] = {}

    # -- search blocks -----------------------------------------------------------------------------
    def start(self, index: Any, block: dict[str, Any], out: list[ev.Event]) -> bool:
        """A block that is not text, thinking or a client tool call; False: not a web search block."""
        kind = block.get("type")
        if kind == "server_tool_use" and block.get("name") == "web_search":
            self.flush(out)
            self.merging = True
            self._uses[index] = block
            self._inputs[index] = [json.dumps(block["input"])] if block.get("input") else []
            return True
        if kind == "web_search_tool_result":
            self.flush(out)
            self.merging = True
            self._result(index, block, out)
            return True
        return False

    def input(self, index: Any, fragment: str) -> None:
        if index in self._inputs:
            self._inputs[index].append(fragment)

    def _result(self, index: Any, block: dict[str, Any], out: list[ev.Event]) -> None:
        use_id = block.get("tool_use_id")
        at = next((i for i, use in self._uses.items() if use.get("id") == use_id), None)
        use = self._uses.pop(at, None) if at is not None else None
        query = _query("".join(self._inputs.pop(at, []))) if at is not None else {}
        content = block.get("content")
        results = content if isinstance(content, list) else []
        sources = [r["url"] for r in results if isinstance(r, dict) and isinstance(r.get("url"), str)]
        failed = not isinstance(content, list)  # a `web_search_tool_result_error` object
        state = None
        if use is not None:
            blocks = [{"type": "server_tool_use", "id": use_id, "name": "web_search", "input": query},
                      {"type": "web_search_tool_result", "tool_use_id": use_id, "content": content}]
            state = VendorState(dialect="anthropic", blocks=blocks)
        text = query.get("query")
        out.append(ev.WebSearch(at if at is not None else index, text if isinstance(text, str) else "",
                                sources, state, failed))

    def end(self, out: list[ev.Event]) -> None:
        """The message is over: the text run closes; a search without a result ends unfinished."""
        self.flush(out)
        for at in list(self._uses):
            self._uses.pop(at)
            text = _query("".join(self._inputs.pop(at, []))).get("query")
            out.append(ev.WebSearch(at, text if isinstance(text, str) else "", [], None, failed=True))

    # -- the cited text run ------------------------------------------------------------------------
    def text_start(self, index: Any, block: dict[str, Any]) -> Any:
        """The key of a text block: its own, or the open run's once the stream searched."""
        if not self.merging and "citations" not in block:
            return index
        self.merging = True
        if self._run is None:
            self._run, self._run_len = index, 0
        self._keys[index] = self._run
        self._starts[index] = self._run_len
        return self._run

    def text(self, index: Any, text: str) -> Any:
        """Text of a block in the run: counted; returns the run's key."""
        self._run_len += len(text)
        return self._keys.get(index, index)

    def cite(self, index: Any, citation: Any, out: list[ev.Event]) -> None:
        if isinstance(citation, dict) and isinstance(citation.get("url"), str):
            self._citations.setdefault(index, []).append(citation)
        else:
            kind = citation.get("type") if isinstance(citation, dict) else None
            out.append(ev.Unknown(f"output.citation.{kind}"))

    def text_stop(self, index: Any, out: list[ev.Event]) -> bool:
        """A text block of the run ended: its citations cover its characters, and the run stays
        open. False for a text block outside any run (it closes now)."""
        if index not in self._keys:
            return False
        key = self._keys.pop(index)
        start = self._starts.pop(index, 0)
        seen = set()
        for citation in self._citations.pop(index, []):
            if citation["url"] in seen:
                continue
            seen.add(citation["url"])
            title = citation.get("title")
            out.append(ev.Citation(key, citation["url"], title if isinstance(title, str) else "",
                                   start, self._run_len))
        return True

    def flush(self, out: list[ev.Event]) -> None:
        if self._run is not None:
            out.append(ev.TextDone(self._run))
            self._run = None


def _query(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text) if text.strip() else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
