"""A replayed turn as a newcomer reads it (`./run demo`, addon/observe/replay.py): the client's request in
one line, where the gateway sent it, the answer item by item in the order it streamed, then what
the translation dropped (with each drop's kind) and noted.

    request  gpt-5.5, streamed · 10 tools: exec_command, write_stdin, … · 4 input items: …
    target   anthropic claude-sonnet-5-5 · POST https://api.anthropic.com/v1/messages -> 200
    answer
      reasoning  The user wants two names for a pet pelican…
      message    - Captain
                 - Scoop
      completed  46 tokens in, 84 out
    dropped  tools[9] (lossy), text.verbosity (cosmetic)
    notes    web search dropped: …

The answer is read from the Responses events the client got (docs/responses.md "Event order"), one
event at a time, so text appears as its deltas arrived.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

from addon.observe import flowinfo
from translators.wire.sse import SSEDecoder

TOOLS_SHOWN = 5
"""Tool names listed in the request line; the rest are counted."""
LABEL = 11
"""Width of an answer line's label (`reasoning`, `message`, `tool call`...)."""
INDENT = "  " + " " * LABEL


def request_line(body: dict[str, Any]) -> str:
    """`request  gpt-5.5, streamed · 3 tools: a, b, c · 2 input items: 1 message/user, 1 reasoning`."""
    head = f"{body.get('model')}, {'streamed' if body.get('stream') else 'whole answer'}"
    names = [_tool_name(tool) for tool in body.get("tools") or [] if isinstance(tool, dict)]
    tools = "no tools"
    if names:
        more = f", +{len(names) - TOOLS_SHOWN} more" if len(names) > TOOLS_SHOWN else ""
        tools = f"{len(names)} tool{'s' * (len(names) != 1)}: {', '.join(names[:TOOLS_SHOWN])}{more}"
    items = body.get("input", body.get("messages"))  # a Messages client's (docs/claude-code.md)
    if isinstance(items, str):
        kinds = Counter(["message/user"])
    else:
        kinds = Counter(_item_kind(item) for item in items or [] if isinstance(item, dict))
    count = sum(kinds.values())
    listing = ", ".join(f"{n} {kind}" for kind, n in kinds.items())
    return f"request  {head} · {tools} · {count} input item{'s' * (count != 1)}: {listing or 'none'}"


def _tool_name(tool: dict[str, Any]) -> str:
    if tool.get("type") == "namespace":
        return f"{tool.get('name')}.*"
    return str(tool.get("name") or tool.get("type"))


def _item_kind(item: dict[str, Any]) -> str:
    kind = str(item.get("type") or ("message" if "role" in item else "?"))
    return f"{kind}/{item.get('role')}" if kind == "message" else kind


def target_line(info: dict[str, Any], method: str, url: str, status: int | None) -> str:
    """`target   anthropic claude-sonnet-4-6 · POST https://api.anthropic.com/v1/messages -> 200`."""
    return f"target   {info.get('upstream')} {info.get('model')} · {method} {url} -> {status}"


def answer(stream: bytes) -> Iterator[str]:
    """Pieces of text to print, in stream order: each output item on its own labelled line(s),
    text deltas as they came, a tool call with its arguments, and the terminal event's outcome."""
    yield "answer\n"
    decoder = SSEDecoder()
    open_text = False
    for event in [*decoder.feed(stream), *decoder.feed(b"\n\n")]:
        try:
            data = json.loads(event.data)
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        kind = data.get("type") or event.event
        item = data.get("item") if isinstance(data.get("item"), dict) else {}
        if kind == "response.output_item.added" and item.get("type") in ("reasoning", "message"):
            yield _label(str(item["type"]))
            open_text = False
        elif kind in ("response.reasoning_summary_text.delta", "response.output_text.delta",
                      "response.refusal.delta"):
            text = str(data.get("delta") or "")
            open_text = open_text or bool(text)
            yield text.replace("\n", "\n" + INDENT)
        elif kind == "response.reasoning_summary_part.added" and open_text:
            yield "\n" + INDENT  # a second summary part starts on its own line
        elif kind == "response.output_item.done":
            yield from _item_done(item, open_text)
            open_text = False
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            yield _outcome(kind.removeprefix("response."), data.get("response") or {})


def _label(name: str) -> str:
    return f"  {name:<{LABEL}}"


def _item_done(item: dict[str, Any], wrote: bool) -> Iterator[str]:
    kind = item.get("type")
    if kind in ("reasoning", "message"):
        yield "\n" if wrote else f"({'no summary' if kind == 'reasoning' else 'no text'})\n"
    elif kind in ("function_call", "custom_tool_call", "local_shell_call", "tool_search_call"):
        name = item.get("name") or kind
        if item.get("namespace"):
            name = f"{item['namespace']}.{name}"
        arguments = item.get("arguments", item.get("input", item.get("action")))
        yield f"{_label('tool call')}{name} {_arguments(arguments)}\n"
    elif kind == "web_search_call":
        action = item.get("action") if isinstance(item.get("action"), dict) else {}
        yield f"{_label('web search')}{action.get('query') or ''} ({item.get('status')})\n"
    elif kind == "compaction":
        size = len(str(item.get("encrypted_content") or ""))
        yield f"{_label('compaction')}a handoff summary ({size} chars)\n"
    else:
        yield f"{_label(str(kind))}\n"


def _arguments(value: Any) -> str:
    """A call's arguments on one line: JSON compacted, free-form input with its newlines shown."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value.replace("\n", "\\n")
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _outcome(status: str, response: dict[str, Any]) -> str:
    usage = response.get("usage") if isinstance(response.get("usage"), dict) else None
    if status == "failed":
        error = response.get("error") if isinstance(response.get("error"), dict) else {}
        return f"{_label(status)}{error.get('code')}: {error.get('message')}\n"
    if status == "incomplete":
        details = response.get("incomplete_details")
        details = details if isinstance(details, dict) else {}
        return f"{_label(status)}{details.get('reason') or 'no reason given'}{_usage(usage)}\n"
    return f"{_label(status)}{_usage(usage).lstrip(' ·')}\n"


def _usage(usage: dict[str, Any] | None) -> str:
    if not usage:
        return ""
    return f" · {usage.get('input_tokens')} tokens in, {usage.get('output_tokens')} out"


def report(info: dict[str, Any], comment: str) -> list[str]:
    """What the translation dropped, each path with its kind (translators/core/report.py), the notes,
    and the comment mitmweb shows."""
    harmless = set(flowinfo.cosmetic(info))
    dropped = [f"{path} ({'cosmetic' if path in harmless else 'lossy'})"
               for path in info.get("dropped") or []]
    lines = [f"dropped  {', '.join(dropped) if dropped else 'nothing'}"]
    notes = list(info.get("notes") or [])
    lines += [f"{'notes' if i == 0 else '':<9}{note}" for i, note in enumerate(notes)] or ["notes    none"]
    for key in ("refused", "error"):
        if info.get(key):
            lines.append(f"{key:<9}{info[key]}")
    lines.append(f"comment  {comment}")
    return lines
