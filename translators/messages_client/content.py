"""Messages `messages` -> IR items (docs/claude-code.md "Messages").

One Messages message can hold what the IR keeps apart: a user turn's `tool_result` blocks become
`ToolResult` items, its other blocks a user `Message`; an assistant turn's `thinking` becomes a
`Reasoning`, its `tool_use` a `ToolCall`, its text a `Message`, in block order. A `role: "system"`
message (the per-turn-control beta) stays a system message in its place.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import replace
from typing import Any

from translators.core.errors import MalformedRequest
from translators.core.report import Report
from translators.features import vendor_state
from translators.ir.request import (
    Document,
    Image,
    Item,
    Message,
    Part,
    Reasoning,
    Text,
    ToolCall,
    ToolResult,
    VendorState,
    WebSearchCall,
)
from translators.messages_client import cache, signature
from translators.messages_client.tools import Tools
from translators.wire import wirejson

_TEXT_KEYS = frozenset({"type", "text", "cache_control"})
_IMAGE_KEYS = frozenset({"type", "source", "cache_control"})
_DOCUMENT_KEYS = frozenset({"type", "source", "title", "cache_control"})
_TOOL_USE_KEYS = frozenset({"type", "id", "name", "input", "cache_control", "caller"})
_TOOL_RESULT_KEYS = frozenset({"type", "tool_use_id", "content", "is_error", "cache_control"})
_THINKING_KEYS = frozenset({"type", "thinking", "signature"})
_MESSAGE_KEYS = frozenset({"role", "content"})
_SYSTEM_MESSAGE_KEYS = frozenset({"role", "content", "clear_at"})


def blocks(content: Any, path: str) -> list[tuple[str, dict[str, Any]]]:
    """`content` as (path, block) pairs: a string is one text block."""
    if isinstance(content, str):
        return [(f"{path}", {"type": "text", "text": content})] if content else []
    if not isinstance(content, list):
        raise MalformedRequest(f"{path} must be a string or an array of content blocks", param=path)
    out = []
    for j, block in enumerate(content):
        bpath = f"{path}[{j}]"
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise MalformedRequest(f"{bpath} must be a content block with a type", param=bpath)
        out.append((bpath, block))
    return out


def _string(block: dict[str, Any], key: str, path: str) -> str:
    value = block.get(key)
    if not isinstance(value, str):
        raise MalformedRequest(f"{path}.{key} must be a string", param=f"{path}.{key}")
    return value


class Messages:
    """Walks `messages` into IR items, loading deferred tools their `tool_reference`s name."""

    def __init__(self, report: Report, tools: Tools) -> None:
        self.report = report
        self.tools = tools
        self._searches: dict[str, tuple[str, dict[str, Any]]] = {}
        """server_tool_use id -> (its path, the block), until its result comes."""
        self.effort: tuple[object, str] | None = None
        """The last system message's `output_config.effort` (per-turn control), and its path."""

    def decode(self, value: Any) -> list[Item]:
        if not isinstance(value, list) or not value:
            raise MalformedRequest("messages must be a non-empty array", param="messages")
        last_user = max((i for i, m in enumerate(value) if isinstance(m, dict) and m.get("role") == "user"),
                        default=-1)
        items: list[Item] = []
        for i, raw in enumerate(value):
            path = f"messages[{i}]"
            if not isinstance(raw, dict):
                raise MalformedRequest(f"{path} must be an object", param=path)
            role = raw.get("role")
            if role == "user":
                self.report.drop_unread(raw, _MESSAGE_KEYS, path)
                items += self._user(raw.get("content"), f"{path}.content")
            elif role == "assistant":
                self.report.drop_unread(raw, _MESSAGE_KEYS, path)
                items += self._assistant(raw.get("content"), f"{path}.content")
            elif role == "system":
                items += self._system(raw, path, later_user=i < last_user)
            else:
                raise MalformedRequest(f"{path}.role must be user, assistant or system", param=f"{path}.role")
        for path, _ in self._searches.values():
            self.report.drop(path)  # a search without its result: nothing to replay
        return items

    # -- system messages ----------------------------------------------------------------------
    def _system(self, raw: dict[str, Any], path: str, *, later_user: bool) -> list[Item]:
        """A system message mid-conversation. `clear_at: "next_user_message"` shows it only for
        the user turn it follows (anthropic SDK `BetaSystemMessageParam`): once a later user
        message exists it stays out, as the API leaves it out."""
        self.report.drop_unread(raw, _SYSTEM_MESSAGE_KEYS | {"output_config"}, path, skip_empty=True)
        if raw.get("clear_at") == "next_user_message" and later_user:
            self.report.note(f"{path}: a system message cleared at the next user message was left out")
            return []
        config = raw.get("output_config")
        if isinstance(config, dict):
            # per-turn effort: the latest one shown is the effort of the turn being answered
            if config.get("effort") is not None:
                self.effort = (config["effort"], f"{path}.output_config.effort")
            self.report.drop_unread(config, frozenset({"effort"}), f"{path}.output_config", skip_empty=True)
        parts: list[Part] = []
        for bpath, block in blocks(raw.get("content"), f"{path}.content"):
            if block["type"] == "text":
                parts.append(self._text(block, bpath))
            else:  # tool_addition / tool_removal: tool changes mid-conversation
                self.report.drop(bpath)
        return [Message(role="system", parts=parts, origin=path)] if parts else []

    # -- user turns ---------------------------------------------------------------------------
    def _user(self, content: Any, path: str) -> list[Item]:
        items: list[Item] = []
        parts: list[Part] = []
        start = path
        for bpath, block in blocks(content, path):
            if block["type"] == "tool_result":
                if parts:
                    items.append(Message(role="user", parts=parts, origin=start))
                    parts = []
                items += self._tool_result(block, bpath)
                continue
            if not parts:
                start = bpath
            part = self._part(block, bpath)
            if part is not None:
                parts.append(part)
        if parts:
            items.append(Message(role="user", parts=parts, origin=start))
        return items

    def _part(self, block: dict[str, Any], path: str) -> Part | None:
        """A text, image or document block -> its part; any other block is reported."""
        kind = block["type"]
        if kind == "text":
            return self._text(block, path)
        if kind == "image":
            return self._image(block, path)
        if kind == "document":
            return self._document(block, path)
        self.report.drop(path)  # search_result, container_upload, and blocks of later betas
        return None

    def _text(self, block: dict[str, Any], path: str) -> Text:
        text = _string(block, "text", path)
        if block.get("citations"):
            self.report.drop(f"{path}.citations")
        self.report.drop_unread(block, _TEXT_KEYS | {"citations"}, path, skip_empty=True)
        return Text(text=text, cache=cache.read(block, path, self.report))

    def _image(self, block: dict[str, Any], path: str) -> Image | None:
        source = block.get("source")
        mark = cache.read(block, path, self.report)
        self.report.drop_unread(block, _IMAGE_KEYS, path, skip_empty=True)
        if not isinstance(source, dict):
            raise MalformedRequest(f"{path}.source must be an object", param=f"{path}.source")
        if source.get("type") == "base64":
            media = _string(source, "media_type", f"{path}.source")
            data = _string(source, "data", f"{path}.source")
            return Image(url=f"data:{media};base64,{data}", origin=path, cache=mark)
        if source.get("type") == "url":
            return Image(url=_string(source, "url", f"{path}.source"), origin=path, cache=mark)
        self.report.drop(path)  # a `file` source names a file on Anthropic's platform
        return None

    def _document(self, block: dict[str, Any], path: str) -> Document | Text | None:
        source = block.get("source")
        mark = cache.read(block, path, self.report)
        for key in ("context", "citations"):
            if block.get(key):
                self.report.drop(f"{path}.{key}")
        self.report.drop_unread(block, _DOCUMENT_KEYS | {"context", "citations"}, path, skip_empty=True)
        if not isinstance(source, dict):
            raise MalformedRequest(f"{path}.source must be an object", param=f"{path}.source")
        title = block.get("title") if isinstance(block.get("title"), str) else None
        kind = source.get("type")
        spath = f"{path}.source"
        if kind == "base64":
            data = _string(source, "data", spath)
            try:
                size = len(base64.b64decode(data, validate=True))
            except (binascii.Error, ValueError):
                raise MalformedRequest(f"{spath}.data is not base64", param=f"{spath}.data") from None
            media = source.get("media_type")
            media = media if isinstance(media, str) else "application/pdf"
            return Document(media_type=media.lower(), data=data, size=size, filename=title, origin=path,
                            cache=mark)
        if kind == "text":
            raw = _string(source, "data", spath).encode("utf-8")
            return Document(media_type="text/plain", data=base64.b64encode(raw).decode("ascii"),
                            size=len(raw), filename=title, origin=path, cache=mark)
        if kind == "url":
            return Document(media_type="application/pdf", url=_string(source, "url", spath), filename=title,
                            origin=path, cache=mark)
        if kind == "content":
            texts = [b.get("text") for _, b in blocks(source.get("content"), f"{spath}.content")
                     if b["type"] == "text" and isinstance(b.get("text"), str)]
            return Text(text="\n".join(t for t in texts if t), cache=mark)
        self.report.drop(path)  # a `file` source names a file on Anthropic's platform
        return None

    def _tool_result(self, block: dict[str, Any], path: str) -> list[Item]:
        call_id = _string(block, "tool_use_id", path)
        mark = cache.read(block, path, self.report)
        self.report.drop_unread(block, _TOOL_RESULT_KEYS, path, skip_empty=True)
        parts: list[Part] = []
        content = block.get("content")
        for bpath, inner in blocks(content if content is not None else [], f"{path}.content"):
            if inner["type"] == "tool_reference":
                part = self._tool_reference(inner, bpath)
            else:
                part = self._part(inner, bpath)
            if part is None:
                continue
            if part.cache is not None:
                # a breakpoint inside a result: the upstreams mark the result, a block their
                # breakpoints can sit on (the prefix it closes is the same but for the result's end)
                if mark is not None:
                    self.report.drop(part.cache.origin, kind="cosmetic")  # the result has one already
                mark = mark or part.cache
                part = replace(part, cache=None)
            parts.append(part)
        return [ToolResult(kind="function", call_id=call_id, parts=parts,
                           is_error=block.get("is_error") is True, origin=path, cache=mark)]

    def _tool_reference(self, block: dict[str, Any], path: str) -> Text:
        """Tool search's answer (advanced-tool-use beta): the named deferred tool is loaded, as the
        API expands a reference into the tool's definition."""
        name = _string(block, "tool_name", path)
        mark = cache.read(block, path, self.report)
        if not self.tools.load(name):
            self.report.note(f"{path}: tool_reference to {name!r}, which no tool declares")
        return Text(text=f"Tool loaded: {name}", cache=mark)

    # -- assistant turns ----------------------------------------------------------------------
    def _assistant(self, content: Any, path: str) -> list[Item]:
        items: list[Item] = []
        parts: list[Part] = []
        start = path
        for bpath, block in blocks(content, path):
            kind = block["type"]
            if kind == "text":
                if not parts:
                    start = bpath
                parts.append(self._text(block, bpath))
                continue
            if parts:
                items.append(Message(role="assistant", parts=parts, origin=start))
                parts = []
            if kind == "thinking":
                items += self._thinking(block, bpath)
            elif kind == "redacted_thinking":
                items += self._redacted(block, bpath)
            elif kind == "tool_use":
                items.append(self._tool_use(block, bpath))
            elif kind == "server_tool_use" and block.get("name") == "web_search":
                self._searches[_string(block, "id", bpath)] = (bpath, block)
            elif kind == "web_search_tool_result":
                items += self._search_result(block, bpath)
            else:  # other server tools' blocks, MCP blocks, compaction: Anthropic's own state
                self.report.drop(bpath)
        if parts:
            items.append(Message(role="assistant", parts=parts, origin=start))
        return items

    def _thinking(self, block: dict[str, Any], path: str) -> list[Item]:
        thinking = _string(block, "thinking", path)
        sig = block.get("signature")
        state = signature.read(sig, thinking)
        if state is None and vendor_state.is_ours(sig):
            self.report.drop(f"{path}.signature")  # the gateway's marker, but unreadable
        self.report.drop_unread(block, _THINKING_KEYS, path, skip_empty=True)
        if state is None and not thinking:
            return []  # no text, no state: nothing to carry
        return [Reasoning(summary=[thinking] if thinking else [], state=state, origin=path)]

    def _redacted(self, block: dict[str, Any], path: str) -> list[Item]:
        state = signature.read_redacted(block.get("data"))
        if state is None:
            self.report.drop(path)
            return []
        self.report.drop_unread(block, frozenset({"type", "data"}), path, skip_empty=True)
        return [Reasoning(state=state, origin=path)]

    def _tool_use(self, block: dict[str, Any], path: str) -> ToolCall:
        call_id = _string(block, "id", path)
        name = _string(block, "name", path)
        arguments = block.get("input", {})
        if not isinstance(arguments, dict):
            raise MalformedRequest(f"{path}.input must be an object", param=f"{path}.input")
        if block.get("caller") not in (None, {"type": "direct"}):
            self.report.drop(f"{path}.caller")
        self.report.drop_unread(block, _TOOL_USE_KEYS, path, skip_empty=True)
        return ToolCall(kind="function", call_id=call_id, name=name, arguments=wirejson.text(arguments),
                        origin=path, cache=cache.read(block, path, self.report))

    def _search_result(self, block: dict[str, Any], path: str) -> list[Item]:
        """A web search Anthropic (or the gateway, for another upstream's search) ran: its query,
        and the state to take it back: the gateway's own in the call id, else the two blocks
        verbatim, which only Anthropic reads."""
        use_id = _string(block, "tool_use_id", path)
        found = self._searches.pop(use_id, None)
        if found is None:
            self.report.drop(path)
            return []
        use_path, use = found
        query = use.get("input", {}).get("query") if isinstance(use.get("input"), dict) else None
        state = vendor_state.from_id(use_id) or VendorState(dialect="anthropic", blocks=[use, block])
        return [WebSearchCall(query=query if isinstance(query, str) else "", state=state, origin=use_path)]
