"""Canonical request: what the model is asked, independent of any wire format.

Every item remembers `origin`, the dotted path of the client field it came from, so an encoder
that cannot express it reports that exact path as dropped.

The history's items and their parts (`Item`, `Part`) are plain slotted dataclasses, built without
validation: a client decoder checks every value it reads before it builds one (what it refuses
is refused there, with the client's path), and a long session builds hundreds per request, where
pydantic's validation cost five times the object itself (bench/, docs/benchmarks.md "Request
translation over a session"). Nothing changes an item once built: an item a client's
`ItemCache` holds is shared by the requests of its conversation (translators/core/item_cache.py).
What comes from outside the decoders' checks is still validated: the gateway's own payloads a
client replays (`VendorState`, through translators/wire/payload.py), and the request's settings
and tools (pydantic models below).

Loops over a whole history tell items apart by their `type` tag (tools by `kind`), not by
isinstance: isinstance against a pydantic model class that does not match goes through
`ABCMeta.__instancecheck__`, several times slower than comparing the tag.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


CacheTTL = Literal["5m", "1h"]


class CacheMark(_Model):
    """A client's prompt-cache breakpoint (a Messages `cache_control`) on the element it came
    with: the prompt up to and including that element is worth keeping for `ttl`. An upstream with
    breakpoints puts one there; another reports `origin` dropped (translators/features/caching.py,
    docs/anthropic.md "Prompt caching")."""

    ttl: CacheTTL = "5m"
    origin: str = ""
    """The client's field, e.g. `system[1].cache_control`."""


@dataclass(slots=True, kw_only=True)
class Text:
    type: Literal["text"] = "text"
    text: str
    cache: CacheMark | None = None


@dataclass(slots=True, kw_only=True)
class Image:
    type: Literal["image"] = "image"
    url: str
    """A `data:` URL (inline bytes) or an http(s) URL."""
    detail: str | None = None
    origin: str = ""
    cache: CacheMark | None = None

    @property
    def inline(self) -> tuple[str, str] | None:
        """(media type, base64 data) for a base64 `data:` URL, else None."""
        if not self.url.startswith("data:"):
            return None
        head, _, data = self.url.partition(",")
        media = head[5:].split(";")[0] or "application/octet-stream"
        return (media, data) if head.endswith(";base64") else None


@dataclass(slots=True, kw_only=True)
class Document:
    """A file for the model to read: a PDF, a plain-text or an office document (a Responses
    `input_file`, docs/responses.md "Files"). Inline bytes (`data`) or a URL the upstream fetches
    (`url`), never both; each encoder says which media types its vendor takes and reports the rest
    dropped (docs/anthropic.md, docs/gemini.md, docs/bedrock.md, docs/chat.md "Files")."""

    type: Literal["document"] = "document"
    media_type: str | None = None
    """IANA media type, lower case: the data URL's, else the one the file name (or the URL's path)
    implies; None when nothing names one."""
    data: str | None = None
    """The file's bytes, standard base64 (checked when decoded)."""
    size: int | None = None
    """Bytes of the decoded file (inline files only)."""
    url: str | None = None
    filename: str | None = None
    origin: str = ""
    cache: CacheMark | None = None

    @property
    def is_text(self) -> bool:
        """A type whose bytes are text a model reads as it is (plain text, Markdown, CSV, HTML,
        JSON, XML)."""
        media = self.media_type or ""
        return media.startswith("text/") or media in TEXT_APPLICATION_TYPES

    def decoded_text(self) -> str | None:
        """The inline file as UTF-8 text, or None (not inline, or not UTF-8)."""
        if self.data is None:
            return None
        try:
            return base64.b64decode(self.data).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return None


TEXT_APPLICATION_TYPES = frozenset({"application/json", "application/xml", "application/x-yaml",
                                    "application/yaml"})
"""`application/` types whose bytes are text (every `text/` type is)."""


Part = Annotated[Text | Image | Document, Field(discriminator="type")]


class VendorState(_Model):
    """Provider state that must come back verbatim on the next turn (thinking signatures,
    redacted thinking, Gemini thought signatures, DeepSeek reasoning_content).

    It travels to the client inside a Responses `reasoning` item's `encrypted_content`, which
    Codex replays byte for byte (docs/codex.md "Input items" "Echo behaviour").
    """

    dialect: str
    signature: str | None = None
    """Anthropic/Bedrock thinking signature, or a Gemini thoughtSignature."""
    redacted: str | None = None
    """Opaque redacted-thinking data (Anthropic `redacted_thinking.data`, Bedrock redactedContent)."""
    text: str | None = None
    """The reasoning text exactly as the provider produced it (signatures are over this text)."""
    call_ids: list[str] = Field(default_factory=list)
    """For signatures attached to function calls: the calls they belong to (Gemini)."""
    blocks: list[dict[str, Any]] = Field(default_factory=list)
    """A vendor's own search, verbatim, for the next turn: Anthropic's `server_tool_use` and
    `web_search_tool_result` blocks (with the results' encrypted contents), Gemini's server-side
    `toolCall` / `toolResponse` parts (translators/features/websearch.py)."""


@dataclass(slots=True, kw_only=True)
class Message:
    type: Literal["message"] = "message"
    role: Literal["user", "assistant", "system"]
    """`system` is a developer/system message that arrives after the conversation started."""
    parts: list[Part]
    phase: str | None = None
    """Codex's `commentary` / `final_answer` marker on assistant messages."""
    origin: str = ""


@dataclass(slots=True, kw_only=True)
class Reasoning:
    type: Literal["reasoning"] = "reasoning"
    summary: list[str] = field(default_factory=list)
    content: list[str] = field(default_factory=list)
    state: VendorState | None = None
    opaque: str | None = None
    """`encrypted_content` not made by this gateway (OpenAI's own); only a Responses target reads it."""
    origin: str = ""


ToolKind = Literal["function", "custom", "tool_search", "local_shell", "shell", "apply_patch", "computer"]


@dataclass(slots=True, kw_only=True)
class ToolCall:
    type: Literal["tool_call"] = "tool_call"
    kind: ToolKind
    call_id: str
    name: str
    namespace: str | None = None
    arguments: str
    """JSON text for function, tool_search, local_shell, shell, apply_patch and computer calls; the
    raw input for custom calls."""
    origin: str = ""
    cache: CacheMark | None = None


@dataclass(slots=True, kw_only=True)
class ToolResult:
    type: Literal["tool_result"] = "tool_result"
    kind: ToolKind
    call_id: str
    parts: list[Part]
    is_error: bool = False
    """The tool failed and the parts say how (a Messages `tool_result.is_error`); each encoder
    carries it in its vendor's own flag or marks the text (`toolset.result_parts`)."""
    origin: str = ""
    cache: CacheMark | None = None
    """A breakpoint on the result, or on a block inside it (the upstreams mark the result)."""


@dataclass(slots=True, kw_only=True)
class WebSearchCall:
    """A web search the upstream ran on its own side (a Responses `web_search_call`)."""

    type: Literal["web_search"] = "web_search"
    query: str = ""
    state: VendorState | None = None
    """What the vendor needs to take the search back (this gateway's, from the item's id)."""
    origin: str = ""


Item = Annotated[Message | Reasoning | ToolCall | ToolResult | WebSearchCall, Field(discriminator="type")]


class FunctionTool(_Model):
    kind: Literal["function"] = "function"
    name: str
    namespace: str | None = None
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    strict: bool | None = None
    input_examples: list[dict[str, Any]] = Field(default_factory=list)
    """Example inputs that show the model how to call the tool (a Messages tool's
    `input_examples`, advanced-tool-use beta); only an Anthropic upstream takes them."""
    encrypted_args: list[str] = Field(default_factory=list)
    """Parameters the client's schema marks `encrypted` (Codex's multi-agent messages): it asked
    OpenAI's backend to encrypt them, which no other upstream does, so its calls must say their
    arguments are plain (translators/responses_client/tools.py, docs/codex.md "Multi-agent")."""
    origin: str = ""
    cache: CacheMark | None = None


class CustomTool(_Model):
    """A freeform tool: the model writes raw text, optionally constrained by a grammar."""

    kind: Literal["custom"] = "custom"
    name: str
    namespace: str | None = None
    description: str = ""
    syntax: Literal["lark", "regex"] | None = None
    definition: str | None = None
    origin: str = ""


class ToolSearchTool(_Model):
    """Client-executed tool discovery (Codex `tool_search`, execution `client`)."""

    kind: Literal["tool_search"] = "tool_search"
    name: str = "tool_search"
    namespace: None = None
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    origin: str = ""


class LocalShellTool(_Model):
    """The `local_shell` tool: the client runs an argv; calls return as `local_shell_call`."""

    kind: Literal["local_shell"] = "local_shell"
    name: str = "local_shell"
    namespace: None = None
    description: str = "Run a shell command on the user's machine."
    parameters: dict[str, Any]
    origin: str = ""


class ClientTool(_Model):
    """A tool of the Responses API's own that the client runs (`shell` in a local environment,
    `apply_patch`, computer use): another upstream gets a function of this name and schema, and its
    calls go back as the API's own call items (translators/responses_client/client_tools.py)."""

    kind: Literal["shell", "apply_patch", "computer"]
    name: str
    namespace: None = None
    description: str
    parameters: dict[str, Any]
    origin: str = ""


class HostedTool(_Model):
    """A tool the OpenAI platform runs itself (web_search, image_generation...)."""

    kind: Literal["hosted"] = "hosted"
    name: str
    namespace: None = None
    raw: dict[str, Any]
    origin: str = ""


class WebSearchTool(_Model):
    """The hosted `web_search` tool (also `web_search_preview`), served by the upstream's own
    search where it has one (translators/features/websearch.py)."""

    kind: Literal["web_search"] = "web_search"
    name: str = "web_search"
    namespace: None = None
    live: bool = True
    """`external_web_access`: false asks for cached results only, which no other vendor offers."""
    allowed_domains: list[str] = Field(default_factory=list)
    user_location: dict[str, Any] | None = None
    """`{type: "approximate", city?, region?, country?, timezone?}` as the client sent it."""
    context_size: str | None = None
    """`search_context_size`: low | medium | high."""
    origin: str = ""


Tool = Annotated[
    FunctionTool | CustomTool | ToolSearchTool | LocalShellTool | ClientTool | HostedTool | WebSearchTool,
    Field(discriminator="kind"),
]


class Namespace(_Model):
    name: str
    description: str = ""


class ToolChoice(_Model):
    mode: Literal["auto", "none", "required", "tool"] = "auto"
    name: str | None = None
    namespace: str | None = None


class ReasoningConfig(_Model):
    effort: str | None = None
    """none | minimal | low | medium | high | xhigh (as the client said it)."""
    summary: str | None = None


RequestKind = Literal["turn", "compaction"]
"""`turn`: a model turn. `compaction`: the client asks for its history to be compacted; the
upstream is asked for a handoff summary instead (translators/features/compaction.py, docs/compaction.md)."""


class CacheHints(_Model):
    """The client's breakpoints that belong to no item or tool (the items, parts and function
    tools carry theirs as `cache`)."""

    present: bool = False
    """The client sent a breakpoint somewhere: without one nothing needs looking for."""
    system: dict[int, CacheMark] = Field(default_factory=dict)
    """By index into `Request.system`."""
    auto: CacheMark | None = None
    """Messages' top-level `cache_control`: a breakpoint on the last block that can carry one."""


class Request(_Model):
    model: str
    kind: RequestKind = "turn"
    system: list[str] = Field(default_factory=list)
    """Top-level instructions, then the developer/system messages that open the conversation."""
    items: list[Item] = Field(default_factory=list)
    tools: list[Tool] = Field(default_factory=list)
    namespaces: list[Namespace] = Field(default_factory=list)
    tool_choice: ToolChoice = Field(default_factory=ToolChoice)
    parallel_tool_calls: bool | None = None
    max_output_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    """Sample from the k likeliest tokens only (a Messages `top_k`; a Responses client has none)."""
    stop_sequences: list[str] = Field(default_factory=list)
    """Texts that end the answer where the model writes one (a Messages `stop_sequences`); the
    answer ends with finish reason `stop_sequence` where the upstream says which one matched."""
    reasoning: ReasoningConfig = Field(default_factory=ReasoningConfig)
    verbosity: str | None = None
    output_schema: dict[str, Any] | None = None
    """`text.format` of type json_schema: {name, schema, strict}."""
    stream: bool = True
    user: str | None = None
    """A stable, opaque id of the client's end user, for the vendor's abuse detection: Responses'
    `safety_identifier`, or the deprecated `user` it replaces (docs/responses.md "End user id")."""
    cache: CacheHints = Field(default_factory=CacheHints)
