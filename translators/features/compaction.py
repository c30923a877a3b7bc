"""Codex's remote compaction served by another vendor's model (docs/compaction.md).

Codex with its built-in OpenAI provider compacts *remotely*: a streamed Responses request whose
last input item is `{"type": "compaction_trigger"}`, answered by exactly one `compaction` output
item whose `encrypted_content` Codex replays byte for byte on every later turn; the Agents SDK
posts the history to `/responses/compact` instead and reads back a whole `response.compaction`
object holding that item (docs/compaction.md "Two forms"). For any other vendor the gateway asks
the upstream for a handoff summary instead, and carries the summary in that item as its own marked
payload (`dgw1c:`, the family of `vendor_state`'s `dgw1:`).

A compaction is a kind of request (`Request.kind`): the Responses decoder reads it from the trailing
trigger (`is_trigger`, which the addon also uses to route it to the summarizer before decoding), and
`translate_request` from its caller for a body posted to `/responses/compact`. Here: the trigger
rule, the summarizer's request (the history as plain conversation, no tools, the gateway's
instruction), the payload, and what a replayed compaction item becomes. The answer's shape is
written once, by `translators/responses_client/compaction.py`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from translators.core.report import Report
from translators.ir.request import Item, Message, Part, ReasoningConfig, Request, Text, ToolChoice
from translators.wire import payload

MARKER = "dgw1c:"
VERSION = 1
TRIGGER = "compaction_trigger"
ITEM_TYPES = frozenset({"compaction", "compaction_summary", "context_compaction"})
"""Input items that carry compacted context (`compaction_summary` is an alias of `compaction`)."""

INSTRUCTION = """\
The conversation above is about to be compacted: everything before this message will be replaced \
by your summary, and a coding agent (possibly another model) will continue the work from the \
summary alone, with the same tools and workspace. Write that handoff summary now. Do not call \
tools and do not continue the task.

Cover, as far as the conversation shows them:
- The user's goal, requirements, constraints and preferences, in their own terms where it matters.
- Decisions made and why, including approaches tried and rejected.
- Files created, changed, read or deleted, with paths and what changed in each.
- Commands run that matter, and their outcome.
- The current state of the work: what is done, what is in progress, what is verified.
- Errors and problems met, and whether and how each was resolved.
- The next steps, in order, and any open questions for the user.
- Exact names, identifiers, values, snippets or messages needed to continue.

Be concise and factual; use short headed sections or bullet lists. Start directly with the \
summary: no preamble, no closing remarks."""
"""The gateway's own summarization instruction, sent as the last user message."""

REPLAY_PREFIX = ("[Summary of the earlier conversation, which was compacted to save context. "
                 "Continue the work from it.]\n\n")
"""The line a replayed summary opens with, so the model reads it as history, not a new request."""

FOREIGN_NOTE = ("{path}: a compaction item written by OpenAI cannot be read by another vendor; "
                "the earlier context it summarized is lost")
UNREADABLE_NOTE = ("{path}: a gateway compaction item could not be read (corrupt, or from another "
                   "gateway version); the earlier context it summarized is lost")


class Summary(BaseModel):
    """What a gateway compaction item carries (base64url JSON after `MARKER`)."""

    model_config = ConfigDict(extra="forbid")

    v: Literal[1] = VERSION
    summary: str
    dialect: str
    """The upstream dialect that wrote the summary."""
    model: str
    """The upstream model that wrote it."""


def encode(summary: Summary) -> str:
    return payload.write(MARKER, summary.model_dump_json())


def decode(encrypted: Any) -> Summary | None:
    """The summary this gateway wrote, or None for anything else (OpenAI's own, corrupt, or of an
    unknown version): all of those are unreadable here."""
    return payload.read(MARKER, encrypted, Summary)


def is_ours(encrypted: Any) -> bool:
    return isinstance(encrypted, str) and encrypted.startswith(MARKER)


def is_trigger(body: Any) -> bool:
    """A remote-compaction request: its last input item is `compaction_trigger`
    (docs/compaction.md). The one rule: the Responses decoder and the addon's routing both ask it."""
    items = body.get("input") if isinstance(body, dict) else None
    return (isinstance(items, list) and bool(items) and isinstance(items[-1], dict)
            and items[-1].get("type") == TRIGGER)


def replayed(summary: Summary) -> str:
    """The text a gateway compaction item becomes on a later turn: a user message."""
    return REPLAY_PREFIX + summary.summary


def replay_item(item: dict[str, Any], path: str, report: Report) -> str | None:
    """A compaction item in a request to another vendor: the summary text to put in its place,
    or None when there is nothing readable (reported: dropped, with a note for OpenAI's own)."""
    summary = decode(item.get("encrypted_content"))
    if summary is not None:
        return replayed(summary)
    report.drop(path)
    encrypted = item.get("encrypted_content")
    if is_ours(encrypted):
        report.note(UNREADABLE_NOTE.format(path=path))
    elif encrypted:
        report.note(FOREIGN_NOTE.format(path=path))
    return None


# -- the summarizer's request ---------------------------------------------------------------------


def summarizer_request(request: Request, report: Report) -> Request:
    """A compaction request (`Request.kind`) -> the one that asks the upstream for the handoff
    summary.

    The history stays whole and in order, but as a plain conversation the summarizer can read
    without tools: every tool call becomes an assistant text and every result a user text (a
    vendor refuses tool blocks when no tools are declared, and a summarizer offered tools may call
    one instead of writing). Reasoning items are left out (signed thinking cannot be replayed with
    thinking kept low, and the summary is about what was done and said). The client's system
    prompt stays, the gateway's instruction comes last, reasoning is asked for at `low`.
    """
    names = {item.call_id: item.name for item in request.items if item.type == "tool_call"}
    items: list[Item] = []
    calls = reasoning = 0
    for item in request.items:
        if item.type == "tool_call":
            calls += 1
            items.append(Message(role="assistant", parts=[Text(text=_call_text(item))], origin=item.origin))
        elif item.type == "tool_result":
            name = names.get(item.call_id, item.kind)
            head = Text(text=f"[result of {name} call {item.call_id}]")
            items.append(Message(role="user", parts=[head, *_result_parts(item.parts)], origin=item.origin))
        elif item.type == "reasoning":
            reasoning += 1
        elif item.type == "web_search":
            items.append(Message(role="assistant", parts=[Text(text=f"[searched the web: {item.query}]")],
                                 origin=item.origin))
        else:
            items.append(item)
    items.append(Message(role="user", parts=[Text(text=INSTRUCTION)], origin="compaction"))
    note = ("compaction: the upstream was asked for a handoff summary with the gateway's instruction, "
            "without tools")
    if calls:
        note += f"; {calls} tool call(s) and their results sent as text"
    if reasoning:
        note += f"; {reasoning} reasoning item(s) left out"
    report.note(note)
    return request.model_copy(update={
        "items": items, "tools": [], "namespaces": [], "tool_choice": ToolChoice(),
        "parallel_tool_calls": None, "temperature": None, "top_p": None, "output_schema": None,
        "verbosity": None, "reasoning": ReasoningConfig(effort="low"),
    })


def _call_text(item: Any) -> str:
    name = f"{item.namespace}.{item.name}" if item.namespace else item.name
    return f"[called {name}, call {item.call_id}]\n{item.arguments}"


def _result_parts(parts: list[Part]) -> list[Part]:
    return list(parts) if parts else [Text(text="(no output)")]
