"""Responses request body -> IR (`decode`), for every item Codex 0.169 can send
(docs/codex.md "Request", "Input items")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from translators.core.errors import MalformedRequest, UnsupportedFeature
from translators.core.item_cache import ItemCache
from translators.core.report import Report
from translators.features import compaction, pairing, vendor_state
from translators.ir.request import (
    CacheHints,
    Image,
    Item,
    Message,
    Part,
    Reasoning,
    ReasoningConfig,
    Request,
    Text,
    ToolCall,
    ToolChoice,
    ToolResult,
    WebSearchCall,
)
from translators.responses_client import client_tools, files
from translators.responses_client.reuse import Reuse
from translators.responses_client.tools import ToolCollector, listing
from translators.wire import wirejson

# Fields that only steer OpenAI's own storage, caching or client bookkeeping: meaningless to any
# other upstream, so consuming them loses nothing the model would see.
_SILENT_TOP = {"store", "prompt_cache_key", "stream_options", "include", "client_metadata"}
_REFUSED_TOP = {
    "previous_response_id":
        "the gateway is stateless: send the whole history instead of previous_response_id",
    "conversation": "the gateway is stateless: stored conversations cannot be resolved",
    "prompt": "stored prompt templates live on OpenAI's platform and cannot be resolved",
}
_REFUSED_ITEMS = {
    # a final trigger makes the request a compaction (`decode`); anywhere else it means nothing
    "compaction_trigger": "compaction_trigger must be the last input item",
    # the addon replaces every reference to an item it stored (docs/agents-sdk.md "Item
    # references"); one left here names nothing the gateway holds
    "item_reference": "item references point into OpenAI's storage, which the gateway cannot read",
}
_DROPPED_ITEMS = {"image_generation_call", "file_search_call", "code_interpreter_call", "mcp_list_tools",
                  "mcp_call", "mcp_approval_request", "mcp_approval_response"}
# Echo bookkeeping: ids and status of earlier output, and Codex's own turn metadata, which the
# built-in provider leaves on replayed items (seen with Codex 0.169 through the proxy).
_ITEM_BOOKKEEPING = frozenset({"type", "id", "status", "internal_chat_message_metadata_passthrough"})
_TEXT_PARTS = {"input_text", "output_text", "text", "summary_text", "reasoning_text"}
_TEXT_PART_KEYS = frozenset({"type", "text", "annotations", "logprobs"})
_IMAGE_PART_KEYS = frozenset({"type", "image_url", "detail"})
_REASONING_CONFIG_KEYS = frozenset({"effort", "summary", "generate_summary", "context"})
_TEXT_CONTROL_KEYS = frozenset({"verbosity", "format"})


def _known_keys(*known: str) -> frozenset[str]:
    """The keys an item kind reads, plus the bookkeeping every item may carry."""
    return _ITEM_BOOKKEEPING.union(known)


_MESSAGE_KEYS = _known_keys("role", "content", "phase")
# `author` and `recipient` are named again in the message's own text ("Task name: ...",
# "Sender: ..."), which is what the model reads (recorded with Codex 0.169, docs/codex.md "Multi-agent")
_AGENT_MESSAGE_KEYS = _known_keys("content", "author", "recipient")
_REASONING_KEYS = _known_keys("summary", "content", "encrypted_content")
_CONFIGURATION_KEYS = _known_keys("reasoning")
_COMPACTION_KEYS = _known_keys("encrypted_content", "created_by")
_ADDITIONAL_TOOLS_KEYS = _known_keys("tools", "role")
_CALL_KEYS = {args_key: _known_keys("call_id", "name", "namespace", args_key, "encrypted_function_args")
              for args_key in ("arguments", "input")}
_LOCAL_SHELL_KEYS = _known_keys("call_id", "action")
_TOOL_SEARCH_CALL_KEYS = _known_keys("call_id", "execution", "arguments")
_OUTPUT_KEYS = _known_keys("call_id", "output", "name", "namespace")
_TOOL_SEARCH_OUTPUT_KEYS = _known_keys("call_id", "execution", "tools")
_WEB_SEARCH_CALL_KEYS = _known_keys("action")


def decode(body: Any, report: Report, items: ItemCache | None = None) -> Request:
    """`items`: the client's cache of decoded items (translators/responses_client/reuse.py);
    the request decodes only the items (and top-level tools) it does not hold."""
    if not isinstance(body, dict):
        raise MalformedRequest("the request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise MalformedRequest("model must be a non-empty string", param="model")
    for key, why in _REFUSED_TOP.items():
        if body.get(key) not in (None, "", {}):
            raise UnsupportedFeature(why, param=key)

    tools = ToolCollector(report)
    reuse = Reuse(items) if items is not None else None
    if body.get("tools") is not None:
        if reuse is not None:
            reuse.tools(tools, body["tools"], "tools")
        else:
            tools.add_all(body["tools"], "tools")
    reasoning = _reasoning_config(body.get("reasoning"), report)
    state = _ItemState(report, tools, reasoning, reuse)
    system: list[str] = []
    instructions = body.get("instructions")
    if isinstance(instructions, str) and instructions.strip():
        system.append(instructions)
    elif instructions not in (None, "", []):
        report.drop("instructions")
    # a final `compaction_trigger` asks for a compaction: the request's kind, not an item
    compacting = compaction.is_trigger(body)
    items = state.decode_input(body["input"][:-1] if compacting else body.get("input"), system)

    # every value below was checked as it was read: built as it stands, not validated again,
    # each field with a default factory given (pydantic inspects a factory's signature per call)
    request = Request.model_construct(
        model=model,
        kind="compaction" if compacting else "turn",
        system=system,
        items=pairing.pair(items, report),
        tools=tools.tools,
        namespaces=tools.namespaces,
        tool_choice=_tool_choice(body.get("tool_choice"), report),
        parallel_tool_calls=_optional(body, "parallel_tool_calls", bool, report),
        max_output_tokens=_optional(body, "max_output_tokens", int, report),
        temperature=_number(body, "temperature", report),
        top_p=_number(body, "top_p", report),
        stop_sequences=[],
        reasoning=state.reasoning,
        stream=bool(body.get("stream", False)),
        user=_end_user(body, report),
        cache=CacheHints(),
        **_text_controls(body.get("text"), report),
    )
    _report_top_level(body, report)
    return request


def _end_user(body: dict[str, Any], report: Report) -> str | None:
    """`safety_identifier`, else the deprecated `user` it replaces (the openai SDK: "This field is
    being replaced by `safety_identifier` and `prompt_cache_key`"); a `user` beside a different
    `safety_identifier` is dropped."""
    safety = _optional(body, "safety_identifier", str, report)
    user = _optional(body, "user", str, report)
    if safety is not None and user is not None and user != safety:
        report.drop("user")
    return safety if safety is not None else user


def _report_top_level(body: dict[str, Any], report: Report) -> None:
    known = {"model", "input", "instructions", "tools", "tool_choice", "parallel_tool_calls",
             "max_output_tokens", "temperature", "top_p", "reasoning", "text", "stream", "user",
             "safety_identifier"}
    for key, value in body.items():
        if key in known or key in _SILENT_TOP or value is None:
            continue
        if key == "service_tier" and value in ("auto", "default"):
            continue
        report.drop(key)


def _optional(body: dict[str, Any], key: str, kind: type | tuple[type, ...], report: Report) -> Any:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) and kind is not bool:
        report.drop(key)
        return None
    if not isinstance(value, kind):
        raise MalformedRequest(f"{key} has the wrong type", param=key)
    return value


def _number(body: dict[str, Any], key: str, report: Report) -> float | None:
    """A number the IR keeps as a float (an integer `1` is sent on as `1.0`)."""
    value = _optional(body, key, (int, float), report)
    try:
        return None if value is None else float(value)
    except OverflowError:  # an integer of hundreds of digits, read by the standard parser
        raise MalformedRequest(f"{key} is out of range", param=key) from None


def _reasoning_config(value: Any, report: Report) -> ReasoningConfig:
    if not isinstance(value, dict):
        if value is not None:
            report.drop("reasoning")
        return ReasoningConfig()
    report.drop_unread(value, _REASONING_CONFIG_KEYS, "reasoning")
    effort = value.get("effort")
    summary = value.get("summary") or value.get("generate_summary")
    return ReasoningConfig(effort=effort if isinstance(effort, str) else None,
                           summary=summary if isinstance(summary, str) else None)


_JSON_SCHEMA_FORMAT_KEYS = frozenset({"type", "name", "schema", "strict", "description"})


def _text_controls(value: Any, report: Report) -> dict[str, Any]:
    if not isinstance(value, dict):
        return {}
    out: dict[str, Any] = {}
    report.drop_unread(value, _TEXT_CONTROL_KEYS, "text")
    if isinstance(value.get("verbosity"), str):
        out["verbosity"] = value["verbosity"]
    fmt = value.get("format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema" and isinstance(fmt.get("schema"), dict):
        report.drop_unread(fmt, _JSON_SCHEMA_FORMAT_KEYS, "text.format")
        out["output_schema"] = {"name": fmt.get("name") or "output", "schema": fmt["schema"],
                                "strict": bool(fmt.get("strict"))}
        if isinstance(fmt.get("description"), str) and fmt["description"]:
            out["output_schema"]["description"] = fmt["description"]
    elif isinstance(fmt, dict) and fmt.get("type") == "json_object":
        out["output_schema"] = {"name": "output", "schema": {"type": "object"}, "strict": False}
    elif fmt is not None and not (isinstance(fmt, dict) and fmt.get("type") == "text"):
        report.drop("text.format")
    return out


def _tool_choice(value: Any, report: Report) -> ToolChoice:
    if value is None or value == "auto":
        return ToolChoice()
    if value in ("none", "required"):
        return ToolChoice(mode=value)
    kind = value.get("type") if isinstance(value, dict) else None
    if not isinstance(kind, str):  # a retyped `type` is no choice at all: dropped, reported
        report.drop("tool_choice")
        return ToolChoice()
    if kind in ("function", "custom") and isinstance(value.get("name"), str):
        namespace = value.get("namespace") if isinstance(value.get("namespace"), str) else None
        return ToolChoice(mode="tool", name=value["name"], namespace=namespace)
    if kind in client_tools.TOOL_CHOICES:
        # `{"type": "shell"}`, `{"type": "apply_patch"}`, `{"type": "computer_use_preview"}`
        # (openai `ToolChoiceShellParam`, ...): the function of that name on another upstream
        return ToolChoice(mode="tool", name=client_tools.TOOL_CHOICES[kind])
    if kind == "allowed_tools":
        report.drop("tool_choice.tools")
        return ToolChoice(mode="required" if value.get("mode") == "required" else "auto")
    report.drop("tool_choice")
    return ToolChoice()


class _ItemState:
    """Walks `input`, turning each item into IR items and naming what it cannot carry."""

    def __init__(self, report: Report, tools: ToolCollector, reasoning: ReasoningConfig,
                 reuse: Reuse | None = None) -> None:
        self.report = report
        self.tools = tools
        self.reasoning = reasoning
        self.reuse = reuse

    def decode_input(self, value: Any, system: list[str]) -> list[Item]:
        if isinstance(value, str):
            return [Message(role="user", parts=[Text(text=value)], origin="input")]
        if value is None:
            return []
        if not isinstance(value, list):
            raise MalformedRequest("input must be a string or an array of items", param="input")
        items: list[Item] = []
        reuse = self.reuse
        again = reuse.begin(value) if reuse is not None else 0  # items the conversation's last request had
        if again:
            assert reuse is not None
            reuse.again(self, again, items, system)
        for i in range(again, len(value)):
            raw, path = value[i], f"input[{i}]"
            if not isinstance(raw, dict):
                raise MalformedRequest(f"{path} must be an object", param=path)
            kind = raw.get("type", "message" if "role" in raw else None)
            if not isinstance(kind, str):
                raise MalformedRequest(f"{path}.type must be a string", param=f"{path}.type")
            handler = self._HANDLERS.get(kind)
            if handler is None:
                if reuse is not None:
                    reuse.skip()
                self._unhandled(raw, path, kind)
                continue
            if reuse is None:
                self.keep(handler(self, raw, path), items, system)
            else:
                self.keep(reuse.item(self, handler, raw, path, kind), items, system)
        if reuse is not None:
            reuse.end()
        return items

    def keep(self, decoded: list[Item] | tuple[Item, ...], items: list[Item], system: list[str]) -> None:
        """An item's IR items into `items`, or, while none is there, its system messages into
        the system prompt."""
        for item in decoded:
            if not items and item.type == "message" and item.role == "system":
                # the developer messages that open the conversation are the system prompt
                # (Codex 0.169 sends its base prompt this way, docs/codex.md "Request")
                system.append(_join(item.parts, self.report))
                continue
            items.append(item)

    def _unhandled(self, raw: dict[str, Any], path: str, kind: str) -> None:
        """An item no handler reads: refused, dropped (and reported), or not a Responses item."""
        if kind in _REFUSED_ITEMS:
            raise UnsupportedFeature(f"{path}: {kind}: {_REFUSED_ITEMS[kind]}", param=path)
        if kind in _DROPPED_ITEMS:
            self.report.drop(path)
            return
        raise MalformedRequest(f"{path}: unknown input item type {kind!r}", param=f"{path}.type")

    def _unknown_keys(self, raw: dict[str, Any], path: str, known: frozenset[str]) -> None:
        self.report.drop_unread(raw, known, path, skip_empty=True)

    # -- messages ---------------------------------------------------------------------------
    def _item_message(self, raw: dict[str, Any], path: str) -> list[Item]:
        role = raw.get("role")
        if role not in ("user", "assistant", "developer", "system"):
            raise MalformedRequest(f"{path}.role must be user, assistant, developer or system",
                                   param=f"{path}.role")
        self._unknown_keys(raw, path, _MESSAGE_KEYS)
        parts = self._parts(raw.get("content"), f"{path}.content")
        ir_role = "system" if role in ("developer", "system") else role
        phase = raw.get("phase") if isinstance(raw.get("phase"), str) else None
        return [Message(role=ir_role, parts=parts, phase=phase, origin=path)] if parts else []

    def _item_agent_message(self, raw: dict[str, Any], path: str) -> list[Item]:
        """A message between Codex's agents (multi_agent_v2). Its `encrypted_content` parts hold
        the `message` argument exactly as the calling model wrote it whenever the call did not say
        its arguments were plain (a nested call from code mode): on a route through this gateway
        that model was not OpenAI's, so it is text (docs/codex.md "Multi-agent")."""
        self._unknown_keys(raw, path, _AGENT_MESSAGE_KEYS)
        content = raw.get("content")
        if isinstance(content, list):
            content = [_read_sealed(part, self.report) for part in content]
        parts = self._parts(content, f"{path}.content")
        return [Message(role="user", parts=parts, origin=path)] if parts else []

    def _parts(self, content: Any, path: str) -> list[Part]:
        if isinstance(content, str):
            return [Text(text=content)] if content else []
        if content is None:
            return []
        if not isinstance(content, list):
            raise MalformedRequest(f"{path} must be a string or an array", param=path)
        parts: list[Part] = []
        for j, part in enumerate(content):
            ppath = f"{path}[{j}]"
            if not isinstance(part, dict):
                raise MalformedRequest(f"{ppath} must be an object", param=ppath)
            kind = part.get("type")
            if not isinstance(kind, str):
                raise MalformedRequest(f"{ppath}.type must be a string", param=f"{ppath}.type")
            if kind in _TEXT_PARTS:
                text = part.get("text")
                if not isinstance(text, str):
                    raise MalformedRequest(f"{ppath}.text must be a string", param=f"{ppath}.text")
                self.report.drop_unread(part, _TEXT_PART_KEYS, ppath)
                if part.get("annotations"):
                    self.report.drop(f"{ppath}.annotations")
                parts.append(Text(text=text))
            elif kind == "refusal" and isinstance(part.get("refusal"), str):
                parts.append(Text(text=part["refusal"]))
            elif kind == "input_image":
                url = part.get("image_url")
                if not isinstance(url, str) or not url:
                    self.report.drop(ppath)
                    continue
                detail = part.get("detail")
                parts.append(Image(url=url, detail=detail if isinstance(detail, str) else None, origin=ppath))
                self.report.drop_unread(part, _IMAGE_PART_KEYS, ppath)
            elif kind == "input_file":
                document = files.decode(part, ppath, self.report)
                if document is not None:
                    parts.append(document)
            else:
                # input_audio, encrypted_content parts: nothing another model can read
                self.report.drop(ppath)
        return parts

    def _item_compaction(self, raw: dict[str, Any], path: str) -> list[Item]:
        """A compaction item: the gateway's summary becomes a user message in its place; OpenAI's
        own cannot be read and is dropped (translators/features/compaction.py)."""
        text = compaction.replay_item(raw, path, self.report)
        if text is None:
            return []
        self._unknown_keys(raw, path, _COMPACTION_KEYS)
        return [Message(role="user", parts=[Text(text=text)], origin=path)]

    # -- reasoning --------------------------------------------------------------------------
    def _item_reasoning(self, raw: dict[str, Any], path: str) -> list[Item]:
        self._unknown_keys(raw, path, _REASONING_KEYS)
        summary = [p.get("text", "") for p in _array(raw, "summary", path) if isinstance(p, dict)]
        content = [p.get("text", "") for p in _array(raw, "content", path) if isinstance(p, dict)]
        encrypted = raw.get("encrypted_content")
        encrypted = encrypted if isinstance(encrypted, str) and encrypted else None
        state = vendor_state.decode(encrypted)
        opaque = None if state or vendor_state.is_ours(encrypted) else encrypted
        return [Reasoning(summary=[s for s in summary if isinstance(s, str)],
                          content=[c for c in content if isinstance(c, str)],
                          state=state, opaque=opaque, origin=path)]

    def _item_configuration_update(self, raw: dict[str, Any], path: str) -> list[Item]:
        reasoning = raw.get("reasoning")
        if isinstance(reasoning, dict) and isinstance(reasoning.get("effort"), str):
            # the last update wins: it is the effort the user switched to most recently
            self.reasoning = self.reasoning.model_copy(update={"effort": reasoning["effort"]})
        self._unknown_keys(raw, path, _CONFIGURATION_KEYS)
        return []

    # -- tools ------------------------------------------------------------------------------
    def _item_additional_tools(self, raw: dict[str, Any], path: str) -> list[Item]:
        self.tools.add_all(raw.get("tools") or [], f"{path}.tools")
        self._unknown_keys(raw, path, _ADDITIONAL_TOOLS_KEYS)
        return []

    def _call(self, raw: dict[str, Any], path: str, kind: str, args_key: str) -> list[Item]:
        call_id = raw.get("call_id")
        name = raw.get("name")
        if not isinstance(call_id, str) or not call_id or not isinstance(name, str) or not name:
            # without call_id no result can ever be paired with it (docs/field-notes.md "Orphan tool items")
            self.report.drop(path)
            return []
        args = raw.get(args_key, "")
        if not isinstance(args, str):
            args = wirejson.text(args)
        namespace = raw.get("namespace") if isinstance(raw.get("namespace"), str) else None
        self._unknown_keys(raw, path, _CALL_KEYS[args_key])
        return [ToolCall(kind=kind, call_id=call_id, name=name, namespace=namespace or None,  # type: ignore[arg-type]
                         arguments=args, origin=path)]

    def _item_function_call(self, raw: dict[str, Any], path: str) -> list[Item]:
        return self._call(raw, path, "function", "arguments")

    def _item_custom_tool_call(self, raw: dict[str, Any], path: str) -> list[Item]:
        return self._call(raw, path, "custom", "input")

    def _item_local_shell_call(self, raw: dict[str, Any], path: str) -> list[Item]:
        call_id = raw.get("call_id") or raw.get("id")
        action = raw.get("action")
        if not isinstance(call_id, str) or not isinstance(action, dict):
            self.report.drop(path)
            return []
        self._unknown_keys(raw, path, _LOCAL_SHELL_KEYS)
        args = {k: v for k, v in action.items() if k != "type" and v is not None}
        return [ToolCall(kind="local_shell", call_id=call_id, name="local_shell",
                         arguments=wirejson.text(args), origin=path)]

    def _item_tool_search_call(self, raw: dict[str, Any], path: str) -> list[Item]:
        call_id = raw.get("call_id")
        if raw.get("execution", "client") != "client" or not isinstance(call_id, str):
            self.report.drop(path)
            return []
        self._unknown_keys(raw, path, _TOOL_SEARCH_CALL_KEYS)
        args = raw.get("arguments")
        if not isinstance(args, str):
            args = wirejson.text(args if args is not None else {})
        return [ToolCall(kind="tool_search", call_id=call_id, name="tool_search", arguments=args,
                         origin=path)]

    def _output(self, raw: dict[str, Any], path: str, kind: str) -> list[Item]:
        call_id = raw.get("call_id") or (raw.get("id") if kind == "local_shell" else None)
        if not isinstance(call_id, str) or not call_id:
            self.report.drop(path)
            return []
        self._unknown_keys(raw, path, _OUTPUT_KEYS)
        output = raw.get("output")
        parts = self._parts(output, f"{path}.output") if not isinstance(output, str) else [Text(text=output)]
        return [ToolResult(kind=kind, call_id=call_id, parts=parts, origin=path)]  # type: ignore[arg-type]

    def _item_function_call_output(self, raw: dict[str, Any], path: str) -> list[Item]:
        return self._output(raw, path, "function")

    def _item_custom_tool_call_output(self, raw: dict[str, Any], path: str) -> list[Item]:
        return self._output(raw, path, "custom")

    def _item_local_shell_call_output(self, raw: dict[str, Any], path: str) -> list[Item]:
        return self._output(raw, path, "local_shell")

    def _item_tool_search_output(self, raw: dict[str, Any], path: str) -> list[Item]:
        # every tool this output lists, including ones an earlier search already loaded
        found = self.tools.add_all(raw.get("tools") or [], f"{path}.tools")
        self._unknown_keys(raw, path, _TOOL_SEARCH_OUTPUT_KEYS)
        call_id = raw.get("call_id")
        if not isinstance(call_id, str) or not call_id:
            return []
        return [ToolResult(kind="tool_search", call_id=call_id, parts=[Text(text=listing(found))],
                           origin=path)]

    def _item_web_search_call(self, raw: dict[str, Any], path: str) -> list[Item]:
        """A search the upstream ran: its query, and the vendor's own blocks when this gateway put
        them in the id (translators/features/websearch.py decides per target what is sent)."""
        self._unknown_keys(raw, path, _WEB_SEARCH_CALL_KEYS)
        action = raw.get("action") if isinstance(raw.get("action"), dict) else {}
        query = action.get("query")
        if not isinstance(query, str):
            queries = action.get("queries")
            query = " | ".join(q for q in queries if isinstance(q, str)) if isinstance(queries, list) else ""
        item_id = raw.get("id")
        state = vendor_state.from_id(item_id if isinstance(item_id, str) else None)
        return [WebSearchCall(query=query, state=state, origin=path)]

    def _client_call(self, raw: dict[str, Any], path: str) -> list[Item]:
        """A `shell_call` / `apply_patch_call` the client ran: the function call it stands for on
        another upstream (translators/responses_client/client_tools.py)."""
        item_type = raw["type"]
        call_id = raw.get("call_id")
        arguments = client_tools.call_arguments(item_type, raw)
        if not isinstance(call_id, str) or not call_id or arguments is None:
            self.report.drop(path)
            return []
        self._unknown_keys(raw, path, _known_keys(*client_tools.CALL_KEYS[item_type]))
        kind = client_tools.CALL_KIND[item_type]
        return [ToolCall(kind=kind, call_id=call_id, name=kind, arguments=arguments, origin=path)]  # type: ignore[arg-type]

    def _client_output(self, raw: dict[str, Any], path: str) -> list[Item]:
        """A `shell_call_output` / `apply_patch_call_output`: the function's result, as text."""
        item_type = raw["type"]
        call_id = raw.get("call_id")
        if not isinstance(call_id, str) or not call_id:
            self.report.drop(path)
            return []
        self._unknown_keys(raw, path, _known_keys(*client_tools.OUTPUT_KEYS[item_type]))
        kind = client_tools.OUTPUT_KIND[item_type]
        if item_type == "computer_call_output":
            url = client_tools.screenshot(raw)
            if url is None:  # a file in OpenAI's file store, or nothing
                self.report.drop(f"{path}.output")
                parts: list[Part] = [Text(text="(no screenshot)")]
            else:
                parts = [Image(url=url, origin=f"{path}.output")]
            return [ToolResult(kind=kind, call_id=call_id, parts=parts, origin=path)]  # type: ignore[arg-type]
        text, failed = client_tools.output_text(item_type, raw)
        return [ToolResult(kind=kind, call_id=call_id, parts=[Text(text=text)], is_error=failed,  # type: ignore[arg-type]
                           origin=path)]

    _HANDLERS: ClassVar[dict[str, Callable[[_ItemState, dict[str, Any], str], list[Item]]]] = {
        "message": _item_message,
        "agent_message": _item_agent_message,
        "compaction": _item_compaction,
        "compaction_summary": _item_compaction,
        "context_compaction": _item_compaction,
        "reasoning": _item_reasoning,
        "configuration_update": _item_configuration_update,
        "additional_tools": _item_additional_tools,
        "function_call": _item_function_call,
        "custom_tool_call": _item_custom_tool_call,
        "local_shell_call": _item_local_shell_call,
        "tool_search_call": _item_tool_search_call,
        "function_call_output": _item_function_call_output,
        "custom_tool_call_output": _item_custom_tool_call_output,
        "local_shell_call_output": _item_local_shell_call_output,
        "tool_search_output": _item_tool_search_output,
        "web_search_call": _item_web_search_call,
        "shell_call": _client_call,
        "apply_patch_call": _client_call,
        "shell_call_output": _client_output,
        "apply_patch_call_output": _client_output,
        "computer_call": _client_call,
        "computer_call_output": _client_output,
    }
    """Input item type -> its handler."""


def _read_sealed(part: Any, report: Report) -> Any:
    """An agent message's `encrypted_content` part as the text it holds (`_item_agent_message`)."""
    if not (isinstance(part, dict) and part.get("type") == "encrypted_content"
            and isinstance(part.get("encrypted_content"), str)):
        return part
    report.note("an agent message's encrypted_content was read as the text the calling model wrote "
                "(a multi-agent call that did not say its arguments were plain)")
    return {"type": "input_text", "text": part["encrypted_content"]}


def _array(raw: dict[str, Any], key: str, path: str) -> list[Any]:
    """`raw[key]` when it is an array (absent or null: empty); any other type is the client's
    error, answered 400 with its path."""
    value = raw.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise MalformedRequest(f"{path}.{key} must be an array", param=f"{path}.{key}")
    return value


def _join(parts: list[Part], report: Report) -> str:
    texts = []
    for part in parts:
        if isinstance(part, Text):
            texts.append(part.text)
        else:
            report.drop(part.origin)
    return "\n".join(texts)
