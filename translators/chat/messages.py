"""IR items -> Chat Completions `messages` (docs/chat.md "Request", "DeepSeek").

One assistant message per step: its text, its `tool_calls`, and for DeepSeek its
`reasoning_content`; then one `tool` message per call, in call order. A `tool` message holds
text only, so images a tool returned follow the run of tool messages in a user message.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from translators.chat.models import Target
from translators.core.report import Report
from translators.features import toolset
from translators.features.naming import fnv1a_32
from translators.ir.request import (
    Document,
    Image,
    Message,
    Part,
    Reasoning,
    Request,
    Text,
    ToolCall,
    ToolResult,
)
from translators.wire import wirejson

# OpenAI rejects longer ids: "Invalid 'messages[2].tool_calls[0].id': string too long. Expected a
# string with maximum length 40" (vercel/ai #5171, openclaw PR #875).
MAX_CALL_ID = 40
_DETAILS = {"auto", "low", "high"}
# OpenAI's file part wants a file name; one the client did not give is made of the type
_DEFAULT_NAMES = {"application/pdf": "document.pdf", "text/plain": "document.txt"}


def call_id(original: str) -> str:
    """The same stable cut on the assistant message and on its tool message keeps them paired."""
    if len(original) <= MAX_CALL_ID:
        return original
    return f"{original[: MAX_CALL_ID - 9]}_{fnv1a_32(original)}"


@dataclass(slots=True)
class _Step:
    text: list[str] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    reasoning: list[Reasoning] = field(default_factory=list)


class _Writer:
    def __init__(self, request: Request, tools: toolset.Toolset, target: Target, report: Report) -> None:
        self.request = request
        self.tools = tools
        self.target = target
        self.report = report
        self.messages: list[dict[str, Any]] = []
        self.step: _Step | None = None
        self.tool_images: list[dict[str, Any]] = []

    def write(self) -> list[dict[str, Any]]:
        system = [*toolset.system_texts(self.request, self.tools), *self._later_system()]
        if system:
            # one leading system message and no other: chat templates of open models raise on a
            # system message anywhere else (docs/chat.md "System first")
            self.messages.append({"role": "system", "content": "\n\n".join(system)})
        for item in self.request.items:
            if item.type == "message" and item.role == "system":
                continue  # in the opening message
            if item.type == "tool_result":
                self._close_step()
                self._result(item)
                continue
            if item.type == "message" and item.role != "assistant":
                self._close_step()
            self._flush_tool_images()
            if item.type == "message":
                self._message(item)
            elif item.type == "reasoning":
                self._open_step().reasoning.append(item)
            else:
                self._open_step().calls.append(self._call(item))
        self._close_step()
        self._flush_tool_images()
        return self.messages

    def _later_system(self) -> list[str]:
        """The texts of the system messages in the history (a developer message in the middle of
        Codex's input, Claude Code's `role: "system"` message after the user's turn), in order,
        each one's text parts joined as vLLM joins them; a note names those that came after the
        conversation began."""
        texts: list[str] = []
        moved: list[str] = []
        began = False
        for item in self.request.items:
            if item.type != "message" or item.role != "system":
                began = True
                continue
            text = "\n".join(p.text for p in self._texts(item.parts) if p.text)
            if not text:
                continue
            texts.append(text)
            if began:
                moved.append(item.origin or "a system message")
        if moved:
            self.report.note(f"{', '.join(moved)}: system message moved into the opening system message "
                             "(chat templates of open models take a system message only first)")
        return texts

    # -- assistant steps --------------------------------------------------------------------
    def _open_step(self) -> _Step:
        if self.step is None:
            self.step = _Step()
        return self.step

    def _close_step(self) -> None:
        step, self.step = self.step, None
        if step is None:
            return
        reasoning = self._reasoning(step)
        if not step.text and not step.calls and reasoning is None:
            return
        # "" rather than null beside tool_calls: llama-cpp-python refuses a null assistant content
        # and its chat templates need the key (docs/chat.md "Compatible servers")
        message: dict[str, Any] = {"role": "assistant", "content": "\n\n".join(step.text)}
        if step.calls:
            message["tool_calls"] = step.calls
        if reasoning is not None:
            message["reasoning_content"] = reasoning
        self.messages.append(message)

    def _reasoning(self, step: _Step) -> str | None:
        """DeepSeek wants its `reasoning_content` back on every assistant message that called
        tools, an empty string where there was none, or it answers 400 (docs/chat.md "DeepSeek")."""
        texts: list[str] = []
        for item in step.reasoning:
            state = item.state
            ours = state is not None and state.dialect == "chat" and state.text is not None
            if self.target.deepseek and ours:
                texts.append(state.text)  # type: ignore[union-attr]
            else:
                # OpenAI's encrypted reasoning, another vendor's thinking, or a target that
                # takes no reasoning input: nothing this upstream can read
                self.report.drop(item.origin)
        if not self.target.deepseek:
            return None
        if texts or step.calls:
            return "".join(texts)
        return None

    def _call(self, item: ToolCall) -> dict[str, Any]:
        wire = self.tools.wire(item.namespace, item.name)
        if item.kind == "custom" and self.target.native_custom_tools:
            return {"id": call_id(item.call_id), "type": "custom",
                    "custom": {"name": wire, "input": item.arguments}}
        return {"id": call_id(item.call_id), "type": "function",
                "function": {"name": wire, "arguments": self._arguments(item)}}

    def _arguments(self, item: ToolCall) -> str:
        """The model's own JSON text when it is an object (what it wrote, byte for byte, keeps the
        prompt cache warm); otherwise the wrapped form JSON-only targets need."""
        if item.kind != "custom":
            try:
                if isinstance(json.loads(item.arguments), dict):
                    return item.arguments
            except ValueError:
                pass
        return wirejson.text(toolset.call_input(item, self.report))

    # -- other roles ------------------------------------------------------------------------
    def _message(self, item: Message) -> None:
        if item.phase is not None:
            self.report.drop(f"{item.origin}.phase")
        if item.role == "assistant":
            texts = [p.text for p in self._texts(item.parts) if p.text]
            self._open_step().text.extend(texts)
            return
        images = item.role == "user" and self.target.images
        parts = self._parts(item.parts, images, files=item.role == "user")
        only_text = all(part["type"] == "text" for part in parts)
        # text alone is one string in every role: a model's chat template may join `content` as a
        # string (SmolLM2's under llama-cpp-python fails on a list; docs/chat.md "Compatible servers")
        content = self._text_content(parts) if item.role != "user" or only_text else _content(parts)
        if content:
            self.messages.append({"role": item.role, "content": content})

    def _result(self, item: ToolResult) -> None:
        # Chat's tool message has no error flag: a failed tool's text says so (toolset.result_parts)
        parts = self._parts(toolset.result_parts(item, self.report), self.target.images)
        texts = [p for p in parts if p["type"] == "text"]
        images = [p for p in parts if p["type"] == "image_url"]
        content = self._text_content(texts)
        wire_id = call_id(item.call_id)
        if images:
            self.tool_images.append({"type": "text", "text": f"Images returned by tool call {wire_id}:"})
            self.tool_images.extend(images)
            content = content or "(the output is the image in the next message)"
        self.messages.append({"role": "tool", "tool_call_id": wire_id, "content": content or ""})

    def _text_content(self, texts: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
        """Content of text parts only (any role): one string, the parts joined by a line break as
        vLLM joins them, unless the route's server takes lists (llama-cpp-python types `system` and
        `tool` content as a string; docs/chat.md "Compatible servers")."""
        if self.target.joins_parts:
            return "\n".join(str(p["text"]) for p in texts)
        return _content(texts)

    def _flush_tool_images(self) -> None:
        if self.tool_images:
            self.messages.append({"role": "user", "content": self.tool_images})
            self.tool_images = []

    def _texts(self, parts: list[Part]) -> list[Text]:
        out: list[Text] = []
        for part in parts:
            if isinstance(part, Text):
                out.append(part)
            else:
                self.report.drop(part.origin)
        return out

    def _parts(self, parts: list[Part], images: bool, files: bool = False) -> list[dict[str, Any]]:
        """`files`: a user message, where a route that says so takes OpenAI's file part."""
        out: list[dict[str, Any]] = []
        for part in parts:
            if part.type == "text":
                if part.text:
                    out.append({"type": "text", "text": part.text})
            elif part.type == "document":
                file = self._file(part) if files else None
                if file is not None:
                    out.append(file)
                else:
                    self.report.drop(part.origin)
            elif images:
                out.append(self._image(part))
            else:
                self.report.drop(part.origin)
        return out

    def _file(self, part: Document) -> dict[str, Any] | None:
        """OpenAI's `{type: file, file: {file_data, filename}}` part, inline files only, where the
        route's `file_parts` says its server takes it (docs/chat.md "Files")."""
        if not self.target.file_parts:
            self.report.note(f"{part.origin}: this Chat route takes no files (file_parts = \"openai\" for a "
                             "server that takes OpenAI's file part)")
            return None
        if part.data is None or part.media_type is None:
            why = "a URL" if part.data is None else "of no named type"
            self.report.note(f"{part.origin}: OpenAI's file part takes base64 data of a named type; "
                             f"the file is {why}")
            return None
        filename = part.filename or _DEFAULT_NAMES.get(part.media_type, "document")
        return {"type": "file", "file": {"file_data": f"data:{part.media_type};base64,{part.data}",
                                         "filename": filename}}

    def _image(self, part: Image) -> dict[str, Any]:
        image: dict[str, Any] = {"url": part.url}
        if part.detail in _DETAILS:
            image["detail"] = part.detail
        elif part.detail is not None:
            self.report.drop(f"{part.origin}.detail")
        return {"type": "image_url", "image_url": image}


def _content(parts: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """A lone text part as a plain string: every compatible server reads that."""
    if len(parts) == 1 and parts[0]["type"] == "text":
        return str(parts[0]["text"])
    return parts


def encode(request: Request, tools: toolset.Toolset, target: Target, report: Report) -> list[dict[str, Any]]:
    return _Writer(request, tools, target, report).write()
