"""IR history -> Gemini `contents` (docs/gemini.md "Request", "Thought signatures").

Roles are `user` and `model` only: assistant items become `model` turns, everything else
(user messages, mid-conversation system messages, tool results) `user` turns; consecutive
same-role items share one turn, so the responses to a parallel set of calls travel together.

Thought signatures come back from the client inside reasoning items (`VendorState`, see
`chunks.py`) and are put back where Gemini produced them:
- a signature with `call_ids` goes on the `functionCall` part of that call (for a parallel set
  only the first call ever had one; the others stay without, as Gemini sent them);
- a signature without `call_ids` was on a text part: it goes on the model text part written just
  before its reasoning item in the same turn (the decoder closes that text right before emitting
  the signature), or, with no text before it, on the next text part of that turn; with no text
  at all it is noted and left out (Gemini checks only functionCall signatures).
"""

from __future__ import annotations

import mimetypes
from dataclasses import dataclass, field
from typing import Any

from translators.core.report import Report
from translators.features import toolset
from translators.gemini import calls, models
from translators.ir.request import Document, Image, Part, Reasoning, Request, ToolResult

# Google's documented placeholder for a call whose real signature is lost (history written by
# another model): Gemini 3 then skips validation instead of answering 400 (docs/gemini.md "Thought
# signatures").
SKIP_SIGNATURE = "skip_thought_signature_validator"


@dataclass(slots=True)
class _Turns:
    report: Report
    contents: list[dict[str, Any]] = field(default_factory=list)
    pending_signature: str | None = None
    """A text signature waiting for the next model text part of the current turn."""
    pending_origin: str = ""

    def add(self, role: str, parts: list[dict[str, Any]]) -> None:
        if not parts:
            return
        if role == "user":
            self._drop_pending()
        if self.contents and self.contents[-1]["role"] == role:
            self.contents[-1]["parts"].extend(parts)
        else:
            self.contents.append({"role": role, "parts": parts})
        if role == "model" and self.pending_signature is not None:
            for part in parts:
                if "text" in part and "thoughtSignature" not in part:
                    part["thoughtSignature"], self.pending_signature = self.pending_signature, None
                    break

    def text_signature(self, signature: str, origin: str) -> None:
        turn = self.contents[-1] if self.contents and self.contents[-1]["role"] == "model" else None
        for part in reversed(turn["parts"] if turn else []):
            if "text" in part and "thoughtSignature" not in part:
                part["thoughtSignature"] = signature
                return
            break  # only the part right before the reasoning item is the text it signed
        self._drop_pending()
        self.pending_signature, self.pending_origin = signature, origin

    def _drop_pending(self) -> None:
        if self.pending_signature is not None:
            self.report.note(f"{self.pending_origin}: a Gemini text signature had no text part to ride on; "
                             "left out")
            self.pending_signature = None

    def finish(self) -> list[dict[str, Any]]:
        self._drop_pending()
        return self.contents


def build(request: Request, model: str, tools: toolset.Toolset, report: Report, *,
          documents: bool = True) -> list[dict[str, Any]]:
    """`documents`: the model reads documents (its `pdf_input`); else each is reported dropped."""
    signatures = _call_signatures(request)
    names = {item.call_id: tools.wire(item.namespace, item.name) for item in request.items
             if item.type == "tool_call"}
    turns = _Turns(report)
    for item in request.items:
        if item.type == "message":
            if item.phase is not None:
                report.drop(f"{item.origin}.phase")
            if item.role == "assistant":
                turns.add("model", _parts(item.parts, report, documents=False))
            else:
                turns.add("user", _parts(item.parts, report, documents=documents))
        elif item.type == "reasoning":
            _reasoning(item, turns, report)
        elif item.type == "tool_call":
            part: dict[str, Any] = {"functionCall": calls.function_call(item, names[item.call_id], report)}
            if item.call_id in signatures:
                part["thoughtSignature"] = signatures[item.call_id]
            turns.add("model", [part])
        elif item.type == "tool_result":
            turns.add("user", _function_response(item, names.get(item.call_id, item.call_id), model, report,
                                                 documents))
    contents = turns.finish()
    if models.requires_call_signatures(model):
        _unsigned_current_turn(contents, report)
    return contents


def _call_signatures(request: Request) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in request.items:
        state = item.state if item.type == "reasoning" else None
        if state is not None and state.dialect == "gemini" and state.signature:
            for call_id in state.call_ids:
                out[call_id] = state.signature
    return out


def _reasoning(item: Reasoning, turns: _Turns, report: Report) -> None:
    state = item.state
    if state is None or state.dialect != "gemini" or not state.signature:
        report.drop(item.origin)  # OpenAI's or another vendor's reasoning: Gemini cannot read it
        return
    # Gemini takes no thought text back (only signatures), so a summary is not replayed
    if item.summary:
        report.drop(f"{item.origin}.summary")
    if item.content:
        report.drop(f"{item.origin}.content")
    if not state.call_ids:
        turns.text_signature(state.signature, item.origin)


def _parts(parts: list[Part], report: Report, documents: bool) -> list[dict[str, Any]]:
    """`documents`: the model reads documents and this is a user turn (a model turn holds what
    the model wrote: text and calls)."""
    out: list[dict[str, Any]] = []
    for part in parts:
        block: dict[str, Any] | None = None
        if part.type == "text":
            if part.text:
                out.append({"text": part.text})
            continue
        if part.type == "image":
            block = image_part(part, report)
        elif documents:
            block = document_part(part, report)
        else:
            report.drop(part.origin)
        if block is not None:
            out.append(block)
    return out


GEMINI_DOCUMENT_TYPES = frozenset({"application/pdf"})
"""Document types Gemini reads besides text: PDF, page by page with its images (docs/gemini.md
"Files"). Office documents have no reader there."""


def document_mime(part: Document) -> str | None:
    """The mimeType a document goes to Gemini with: PDF, images, audio and video as they are, any
    text as its own text type; None for a type Gemini cannot read."""
    media = part.media_type
    if media is None:
        return None
    if media in GEMINI_DOCUMENT_TYPES or media.startswith(("image/", "audio/", "video/")) or part.is_text:
        return media
    return None


def document_part(part: Document, report: Report) -> dict[str, Any] | None:
    """Inline bytes -> `inlineData`, a URL -> `fileData`, both with the file's mimeType. Gemini's
    `displayName` reaches the model only beside its server-side tools, so the file name is
    reported dropped (docs/gemini.md "Files")."""
    mime = document_mime(part)
    if mime is None:
        report.drop(part.origin)
        report.note(f"{part.origin}: Gemini reads PDF, text, image, audio and video files; the file is "
                    f"{part.media_type or 'of no named type'}")
        return None
    if part.filename:
        report.drop(f"{part.origin}.filename")
    if part.data is not None:
        return {"inlineData": {"mimeType": mime, "data": part.data}}
    return {"fileData": {"fileUri": part.url, "mimeType": mime}}


def image_part(part: Image, report: Report) -> dict[str, Any] | None:
    """A data URL -> `inlineData`; an http(s) URL -> `fileData` with the type its name implies."""
    if part.detail not in (None, "auto"):
        report.drop(f"{part.origin}.detail")
    inline = part.inline
    if inline is not None:
        return {"inlineData": {"mimeType": inline[0], "data": inline[1]}}
    mime = mimetypes.guess_type(part.url.split("?")[0])[0]
    if part.url.startswith(("http://", "https://")) and mime is not None:
        return {"fileData": {"fileUri": part.url, "mimeType": mime}}
    report.drop(part.origin)  # no media type can be named for it, and Gemini needs one
    return None


def _function_response(item: ToolResult, name: str, model: str, report: Report,
                       documents: bool) -> list[dict[str, Any]]:
    """The output's text (a text file's too: a function response takes no text as bytes) in
    `response.output`; its images and documents in `parts`, where the model takes them."""
    texts: list[str] = []
    media: list[Image | Document] = []
    for part in item.parts:
        if part.type == "text":
            texts.append(part.text)
        elif part.type == "document" and not documents:
            report.drop(part.origin)
        elif part.type == "document" and part.is_text and (text := part.decoded_text()) is not None:
            texts.append(text)
            if part.filename:
                report.drop(f"{part.origin}.filename")
        else:
            media.append(part)
    # "Use "output" key to specify function output and "error" key to specify error details"
    # (google-genai `FunctionResponse.response`)
    key = "error" if item.is_error else "output"
    response: dict[str, Any] = {"name": name, "response": {key: "\n".join(texts)}}
    call_id = calls.wire_id(item.call_id)
    if call_id is not None:
        response["id"] = call_id
    if media and models.multimodal_function_responses(model):
        nested = [image_part(p, report) if p.type == "image" else _response_document(p, report)
                  for p in media]
        if any(p is not None for p in nested):
            response["parts"] = [p for p in nested if p is not None]
    else:
        for part in media:
            report.drop(part.origin)  # before Gemini 3 a function response holds JSON only
    return [{"functionResponse": response}]


def _response_document(part: Document, report: Report) -> dict[str, Any] | None:
    """A document inside `functionResponse.parts`: PDF only (docs/gemini.md "Files")."""
    if part.media_type not in GEMINI_DOCUMENT_TYPES:
        report.drop(part.origin)
        report.note(f"{part.origin}: a Gemini function response takes PDF files; the file is "
                    f"{part.media_type or 'of no named type'}")
        return None
    return document_part(part, report)


def _unsigned_current_turn(contents: list[dict[str, Any]], report: Report) -> None:
    """Gemini 3 rejects a current-turn step whose calls carry no signature (history written by
    another model): the first call of such a step gets Google's skip placeholder (docs/gemini.md "Thought
    signatures"). The current turn starts after the last user message that is not a function
    response: a user content that answers calls (even with text beside the answers) continues it."""
    start = 0
    for i, content in enumerate(contents):
        if content["role"] == "user" and not any("functionResponse" in p for p in content["parts"]):
            start = i + 1
    for content in contents[start:]:
        if content["role"] != "model":
            continue
        call_parts = [p for p in content["parts"] if "functionCall" in p]
        if call_parts and not any("thoughtSignature" in p for p in call_parts):
            call_parts[0]["thoughtSignature"] = SKIP_SIGNATURE
            report.note(f"function call {call_parts[0]['functionCall']['name']} had no thought signature "
                        f"(written by another model?); sent Gemini's '{SKIP_SIGNATURE}' placeholder")
