"""Hypothesis strategies for Responses request bodies, as Codex and worse clients send them.

`requests()` mixes two families:
- `codex_like()`: well-formed JSON of every item and tool kind Codex sends, with the mess real
  histories have (orphaned outputs, calls without output, missing or duplicate call ids,
  duplicate, over-long and unicode tool names, namespaces, huge texts, arguments and schemas
  nested hundreds deep, reasoning state of every vendor);
- `malformed()`: one of those with a random subtree replaced by a value of another type, a key
  removed or added (wrong types, missing fields).
"""

from __future__ import annotations

import base64
from typing import Any

from hypothesis import strategies as st

from tests.reliability.mutations import _mutate_tree, json_values
from tests.support import conformance
from translators.dialect import BUILTIN
from translators.features import vendor_state
from translators.ir.request import VendorState

CALL_IDS = [
    "call_1",
    "call_2",
    "call_3",
    "call.1",
    "call:1",
    "call 1",
    "toolu_01AbC",
    "c" * 70,
    "call_" + "x" * 60,
    "functions.exec:0",
    "ид-вызова",
    "gcall_r0_0",
]
"""A small pool, so calls and outputs pair up, collide and go missing in every way."""
NAMES = [
    "exec_command",
    "apply_patch",
    "exec",
    "shell",
    "read_file",
    "web_search",
    "tool_search",
    "local_shell",
    "get_weather",
    "a" * 80,
    "name with spaces",
    "naïve-ünïcode",
    "9starts_with_digit",
    "dots.in.name",
    "x",
    "_private",
    "mcp__server__tool",
    "a" * 64,
    "a" * 63 + "b",
]
NAMESPACES = [None, "functions", "mcp__github__", "clock", "multi_agent_v1", "ns.with.dots", "n" * 70]
HUGE = "Lorem ipsum dolor sit amet. " * 12_000  # ~330 KB
PNG = "data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 16).decode()


def deep_object(depth: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        node = {"type": "object", "properties": {"a": node}}
    return node


def deep_arguments(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


text = st.one_of(st.text(max_size=40), st.sampled_from(["", " ", "\n", "hello", HUGE, "\u0000", "😀" * 5]))
names = st.one_of(st.sampled_from(NAMES), st.text(min_size=1, max_size=90))
call_ids = st.sampled_from(CALL_IDS)
depths = st.sampled_from([1, 3, 40, 150, 400])

schemas = st.one_of(
    st.just({"type": "object", "properties": {}}),
    st.recursive(
        st.fixed_dictionaries({"type": st.sampled_from(["string", "integer", "number", "boolean"])}),
        lambda inner: (
            st.fixed_dictionaries(
                {
                    "type": st.just("object"),
                    "properties": st.dictionaries(st.text(max_size=8), inner, max_size=3),
                },
                optional={
                    "required": st.lists(st.text(max_size=8), max_size=2),
                    "additionalProperties": st.booleans(),
                },
            )
            | st.fixed_dictionaries({"type": st.just("array"), "items": inner})
            | st.fixed_dictionaries({"anyOf": st.lists(inner, min_size=1, max_size=3)})
        ),
        max_leaves=8,
    ),
    depths.map(deep_object),
    st.just({"type": "string"}),
)
arguments = st.one_of(
    st.just('{"cmd":"ls"}'),
    st.just("{}"),
    st.just(""),
    st.just("{"),
    st.just("[1,2]"),
    st.just("null"),
    depths.map(deep_arguments),
    st.text(max_size=30),
)


def _function_tool() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"type": st.just("function"), "name": names},
        optional={
            "description": text,
            "parameters": schemas,
            "strict": st.booleans(),
            "defer_loading": st.booleans(),
        },
    )


custom_tool = st.fixed_dictionaries(
    {"type": st.just("custom"), "name": names},
    optional={
        "description": text,
        "format": st.sampled_from(
            [
                {"type": "text"},
                {"type": "grammar", "syntax": "lark", "definition": 'start: "a"+'},
                {"type": "grammar", "grammar": {"syntax": "regex", "definition": "[a-z]+"}},
                {"type": "grammar"},
            ]
        ),
    },
)
hosted_tool = st.sampled_from(
    [
        {"type": "web_search"},
        {"type": "image_generation"},
        {"type": "file_search"},
        {"type": "code_interpreter", "container": {"type": "auto"}},
        {"type": "tool_search", "execution": "server"},
        {"type": "mcp", "server_label": "x"},
        {"type": "brand_new_hosted_tool"},
    ]
)
leaf_tool = st.one_of(
    _function_tool(),
    custom_tool,
    hosted_tool,
    st.just({"type": "local_shell"}),
    st.fixed_dictionaries(
        {"type": st.just("tool_search"), "execution": st.just("client")},
        optional={"parameters": schemas, "description": text},
    ),
)
namespace_tool = st.fixed_dictionaries(
    {
        "type": st.just("namespace"),
        "name": st.sampled_from([n for n in NAMESPACES if n]),
        "tools": st.lists(st.one_of(_function_tool(), custom_tool), max_size=4),
    },
    optional={"description": text},
)
tools = st.lists(st.one_of(leaf_tool, leaf_tool, namespace_tool), max_size=8)

part = st.one_of(
    st.fixed_dictionaries({"type": st.sampled_from(["input_text", "output_text"]), "text": text}),
    st.fixed_dictionaries(
        {
            "type": st.just("input_image"),
            "image_url": st.sampled_from(
                [
                    PNG,
                    "https://example.invalid/cat.png",
                    "https://example.invalid/noext",
                    "data:image/tiff;base64,AAAA",
                ]
            ),
        },
        optional={"detail": st.sampled_from(["auto", "low", "high", "original"])},
    ),
    st.sampled_from(
        [
            {"type": "input_file", "file_id": "file_1"},
            {"type": "input_file", "file_data": "data:application/pdf;base64,JVBERi0xLjQK",
             "filename": "a b.pdf"},
            {"type": "input_file", "file_data": "data:text/plain;base64,aGVsbG8=", "detail": "low"},
            {"type": "input_file", "file_url": "https://example.invalid/paper.pdf"},
            {"type": "input_file", "file_data": "data:application/pdf,not-base64"},
            {"type": "refusal", "refusal": "no"},
            {"type": "input_audio", "input_audio": {"data": "", "format": "wav"}},
        ]
    ),
)
content = st.one_of(text, st.lists(part, max_size=4))


def _vendor_states() -> st.SearchStrategy[str]:
    state = st.builds(
        VendorState,
        dialect=st.sampled_from(["anthropic", "bedrock", "gemini", "chat", "other"]),
        signature=st.none() | st.text(max_size=20),
        redacted=st.none() | st.text(max_size=20),
        text=st.none() | text,
        call_ids=st.lists(call_ids, max_size=2),
    )
    return st.one_of(state.map(vendor_state.encode), st.sampled_from(["dgw1:not-base64!", "gAAAAopenai", ""]))


message = st.fixed_dictionaries(
    {
        "type": st.just("message"),
        "role": st.sampled_from(["user", "assistant", "developer", "system"]),
        "content": content,
    },
    optional={
        "phase": st.sampled_from(["commentary", "final_answer"]),
        "id": st.just("msg_1"),
        "status": st.just("completed"),
    },
)
function_call = st.fixed_dictionaries(
    {"type": st.just("function_call"), "call_id": call_ids, "name": names, "arguments": arguments},
    optional={"namespace": st.sampled_from(NAMESPACES), "id": st.just("fc_1")},
)
function_output = st.fixed_dictionaries(
    {
        "type": st.just("function_call_output"),
        "call_id": call_ids,
        "output": st.one_of(text, st.lists(part, max_size=3)),
    }
)
custom_call = st.fixed_dictionaries(
    {"type": st.just("custom_tool_call"), "call_id": call_ids, "name": names, "input": text},
    optional={"namespace": st.sampled_from(NAMESPACES)},
)
custom_output = st.fixed_dictionaries(
    {
        "type": st.just("custom_tool_call_output"),
        "call_id": call_ids,
        "output": st.one_of(text, st.lists(part, max_size=3)),
    }
)
shell_call = st.fixed_dictionaries(
    {
        "type": st.just("local_shell_call"),
        "call_id": call_ids,
        "action": st.fixed_dictionaries({"type": st.just("exec"), "command": st.lists(text, max_size=3)}),
    }
)
shell_output = st.fixed_dictionaries(
    {"type": st.just("local_shell_call_output"), "call_id": call_ids, "output": text}
)
search_call = st.fixed_dictionaries(
    {
        "type": st.just("tool_search_call"),
        "call_id": call_ids,
        "execution": st.sampled_from(["client", "server"]),
        "arguments": st.just({"query": "files"}),
    }
)
search_output = st.fixed_dictionaries(
    {
        "type": st.just("tool_search_output"),
        "call_id": call_ids,
        "execution": st.just("client"),
        "tools": st.lists(leaf_tool, max_size=3),
    }
)
reasoning = st.fixed_dictionaries(
    {
        "type": st.just("reasoning"),
        "summary": st.lists(
            st.fixed_dictionaries({"type": st.just("summary_text"), "text": text}), max_size=2
        ),
    },
    optional={
        "encrypted_content": _vendor_states(),
        "content": st.lists(
            st.fixed_dictionaries({"type": st.just("reasoning_text"), "text": text}), max_size=2
        ),
    },
)
additional_tools = st.fixed_dictionaries({"type": st.just("additional_tools"), "tools": tools})
odd_items = st.sampled_from(
    [
        {"type": "web_search_call", "id": "ws_1", "status": "completed"},
        {"type": "configuration_update", "reasoning": {"effort": "high"}},
        {"type": "context_compaction"},
        {"type": "compaction", "encrypted_content": "x"},
        {"type": "agent_message", "content": "from another agent"},
        {"role": "user", "content": "no type, a role"},
    ]
)
# each may end the request with a 400, so they are rare
refused_items = st.sampled_from(
    [
        {"type": "item_reference", "id": "x"},
        {"type": "mystery_item"},
        "a bare string item",
    ]
)

item = st.one_of(
    message,
    message,
    function_call,
    function_call,
    function_output,
    function_output,
    custom_call,
    custom_output,
    shell_call,
    shell_output,
    search_call,
    search_output,
    reasoning,
    additional_tools,
    odd_items,
)
items = st.lists(item, max_size=14)


@st.composite
def tool_turn(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A call and its output under one call id (the output sometimes missing), as a turn of a
    tool loop looks; several of these spliced into random items make histories that pair up."""
    call = dict(draw(st.one_of(function_call, custom_call)))
    output_kind = "function_call_output" if call["type"] == "function_call" else "custom_tool_call_output"
    output = {"type": output_kind, "call_id": call["call_id"], "output": draw(text)}
    return [call] if draw(st.integers(0, 9)) == 7 else [call, output]


@st.composite
def histories(draw: st.DrawFn) -> list[Any]:
    out = draw(items)
    for turn in draw(st.lists(tool_turn(), max_size=4)):
        at = draw(st.integers(0, len(out)))
        out[at:at] = turn
    return out


@st.composite
def codex_like(draw: st.DrawFn) -> dict[str, Any]:
    body = draw(
        st.fixed_dictionaries(
            {
                "model": st.sampled_from(["gpt-5.5", "gpt-5.1-codex", "claude-sonnet-4-6"]),
                "input": st.one_of(histories(), histories(), histories(), text),
            },
            optional={
                "instructions": text,
                "tools": tools,
                "stream": st.booleans(),
                "tool_choice": st.sampled_from(
                    [
                        "auto",
                        "none",
                        "required",
                        {"type": "function", "name": "exec_command"},
                        {"type": "custom", "name": "apply_patch"},
                        {"type": "allowed_tools", "mode": "required", "tools": []},
                    ]
                ),
                "parallel_tool_calls": st.booleans(),
                "max_output_tokens": st.sampled_from([1, 100, 2048, 128000]),
                "temperature": st.sampled_from([0, 0.5, 1.0, 2.0]),
                "top_p": st.sampled_from([0.1, 1]),
                "reasoning": st.fixed_dictionaries(
                    {},
                    optional={
                        "effort": st.sampled_from(
                            ["none", "minimal", "low", "medium", "high", "xhigh", "ultra"]
                        ),
                        "summary": st.sampled_from(["auto", "detailed", "none"]),
                        "context": st.just("all_turns"),
                    },
                ),
                "text": st.fixed_dictionaries(
                    {},
                    optional={
                        "verbosity": st.sampled_from(["low", "medium"]),
                        "format": st.one_of(
                            st.just({"type": "text"}),
                            st.just({"type": "json_object"}),
                            st.fixed_dictionaries(
                                {
                                    "type": st.just("json_schema"),
                                    "name": st.just("out"),
                                    "schema": schemas,
                                    "strict": st.booleans(),
                                }
                            ),
                        ),
                    },
                ),
                "store": st.booleans(),
                "include": st.just(["reasoning.encrypted_content"]),
                "prompt_cache_key": st.just("pck"),
                "service_tier": st.sampled_from(["auto", "priority"]),
                "client_metadata": st.just({"installation_id": "inst-secret-1", "session_id": "s1"}),
                "metadata": st.just({"k": "v"}),
                "user": st.just("user-1"),
            },
        )
    )
    # rare on purpose (each ends the request with a 400); 17 since hypothesis favours 0 and the ends
    if draw(st.integers(0, 30)) == 17 and isinstance(body["input"], list):
        body["input"].insert(draw(st.integers(0, len(body["input"]))), draw(refused_items))
    if draw(st.integers(0, 40)) == 17:
        body["previous_response_id"] = "resp_1"
    return body


@st.composite
def malformed(draw: st.DrawFn) -> dict[str, Any]:
    body = draw(codex_like())
    for _ in range(draw(st.integers(1, 3))):
        body = draw(_mutate_tree(body))
    return body


def requests() -> st.SearchStrategy[Any]:
    return st.one_of(codex_like(), codex_like(), malformed(), json_values)


MODELS = {c.dialect: list(c.models) for c in map(conformance.of, BUILTIN)}
"""Upstream models each shipped dialect's requests are translated for (its conformance data)."""


EVERY_FIELD: dict[str, Any] = {
    "model": "gpt-5.5",
    "instructions": "be brief",
    "stream": True,
    "tool_choice": {"type": "function", "name": "exec_command", "namespace": "functions"},
    "parallel_tool_calls": True,
    "max_output_tokens": 2048,
    "temperature": 0.5,
    "top_p": 1,
    "reasoning": {"effort": "high", "summary": "auto"},
    "text": {"verbosity": "low",
             "format": {"type": "json_schema", "name": "out", "strict": True, "description": "the answer",
                        "schema": {"type": "object", "properties": {"a": {"type": "string"}}}}},
    "tools": [
        {"type": "function", "name": "exec_command", "description": "run", "strict": False,
         "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}},
        {"type": "custom", "name": "apply_patch", "description": "patch",
         "format": {"type": "grammar", "syntax": "lark", "definition": "start: /.+/"}},
        {"type": "namespace", "name": "mcp__github__", "description": "GitHub",
         "tools": [{"type": "function", "name": "get_issue", "defer_loading": True,
                    "parameters": {"type": "object", "properties": {}}}]},
        {"type": "tool_search", "execution": "client", "description": "find tools",
         "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}},
        {"type": "local_shell"},
        {"type": "web_search", "external_web_access": False},
    ],
    "input": [
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "system"}]},
        {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "look"},
            {"type": "input_image", "image_url": PNG, "detail": "low"},
        ]},
        {"type": "additional_tools", "tools": [{"type": "function", "name": "read_file",
                                                "parameters": {"type": "object", "properties": {}}}]},
        {"type": "configuration_update", "reasoning": {"effort": "low"}},
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "thinking"}],
         "content": [{"type": "reasoning_text", "text": "deeply"}], "encrypted_content": "opaque"},
        {"type": "message", "role": "assistant", "phase": "commentary", "id": "msg_1", "status": "completed",
         "content": [{"type": "output_text", "text": "on it", "annotations": []},
                     {"type": "refusal", "refusal": "no"}]},
        {"type": "function_call", "call_id": "c1", "name": "exec_command", "namespace": "functions",
         "arguments": '{"cmd":"ls"}'},
        {"type": "function_call_output", "call_id": "c1",
         "output": [{"type": "input_text", "text": "a.txt"}, {"type": "input_image", "image_url": PNG}]},
        {"type": "custom_tool_call", "call_id": "c2", "name": "apply_patch", "input": "*** Begin Patch"},
        {"type": "custom_tool_call_output", "call_id": "c2", "output": "done"},
        {"type": "local_shell_call", "call_id": "c3", "action": {"type": "exec", "command": ["ls"],
                                                               "timeout_ms": 10}},
        {"type": "local_shell_call_output", "call_id": "c3", "output": "a.txt"},
        {"type": "tool_search_call", "call_id": "c4", "execution": "client", "arguments": {"query": "gh"}},
        {"type": "tool_search_output", "call_id": "c4", "execution": "client",
         "tools": [{"type": "function", "name": "list_prs", "parameters": {"type": "object"}}]},
        {"type": "agent_message", "content": [{"type": "input_text", "text": "from a sub-agent"}]},
        {"type": "compaction", "encrypted_content": "opaque-summary"},
        {"type": "message", "role": "user", "content": "go on"},
    ],
}
"""A request with every field the decoder reads, each of its type (for `mutations.retyped`)."""
