"""One rule per Messages request field: translated into the IR, reported (dotted path), or
refused with Anthropic's 400 (docs/claude-code.md "The decoder's fields")."""

from __future__ import annotations

import base64
import json

import pytest

from tests.translators.messages_client.messages import (
    assistant,
    body,
    decoded,
    system_message,
    text,
    tool,
    tool_result,
    tool_use,
    user,
)
from translators.core.errors import MalformedRequest, UnsupportedFeature
from translators.ir.request import CacheMark
from translators.messages_client import errors

# -- system ---------------------------------------------------------------------------------------


def test_a_system_string_is_the_system_prompt() -> None:
    request, report = decoded(body(system="be brief"))
    assert request.system == ["be brief"]
    assert not report


def test_system_text_blocks_are_kept_in_order_with_their_cache_breakpoints() -> None:
    request, report = decoded(body(system=[text("one"), text("two", cache_control={"type": "ephemeral"})]))
    assert request.system == ["one", "two"]
    assert request.cache.system == {1: CacheMark(ttl="5m", origin="system[1].cache_control")}
    assert not report


def test_a_system_block_that_is_not_text_is_refused() -> None:
    with pytest.raises(MalformedRequest):
        decoded(body(system=[{"type": "image", "source": {}}]))


def test_system_messages_before_any_turn_join_the_system_prompt() -> None:
    request, _ = decoded(body(system_message("first"), user("hi")))
    assert request.system == ["first"]
    assert [item.role for item in request.items] == ["user"]


def test_a_system_message_between_user_messages_stays_in_its_place() -> None:
    request, _ = decoded(body(user("a"), assistant(text("b")), system_message("now be terse"), user("c")))
    assert [(item.type, item.role) for item in request.items] == [
        ("message", "user"),
        ("message", "assistant"),
        ("message", "system"),
        ("message", "user"),
    ]
    assert request.items[2].parts[0].text == "now be terse"


def test_a_system_message_cleared_at_the_next_user_message_is_left_out_once_one_follows() -> None:
    request, report = decoded(
        body(user("a"), system_message("once", clear_at="next_user_message"), assistant(text("b")), user("c"))
    )
    assert [item.role for item in request.items] == ["user", "assistant", "user"]
    assert report.notes and not report.dropped


def test_a_system_message_cleared_at_the_next_user_message_is_kept_for_its_own_turn() -> None:
    request, _ = decoded(body(user("a"), system_message("once", clear_at="next_user_message")))
    assert [item.role for item in request.items] == ["user", "system"]


def test_tool_changes_inside_a_system_message_are_reported() -> None:
    message = {"role": "system", "content": [text("x"), {"type": "tool_addition", "tool": {"name": "t"}}]}
    _, report = decoded(body(user("a"), message))
    assert report.dropped == ["messages[1].content[1]"]


def test_the_last_system_messages_effort_is_the_turns_effort() -> None:
    request, report = decoded(
        body(
            user("a"), system_message("x", output_config={"effort": "low"}), output_config={"effort": "high"}
        )
    )
    assert request.reasoning.effort == "low"
    assert not report.dropped


# -- content blocks -------------------------------------------------------------------------------


def test_a_string_content_is_one_text_part() -> None:
    request, _ = decoded(body(user("hello")))
    assert request.items[0].parts[0].text == "hello"


def test_a_base64_image_becomes_a_data_url_and_a_url_image_stays_a_url() -> None:
    request, _ = decoded(
        body(
            user(
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}},
                {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
            )
        )
    )
    assert [part.url for part in request.items[0].parts] == [
        "data:image/png;base64,iVBO",
        "https://example.com/a.png",
    ]


def test_an_image_by_file_id_is_reported() -> None:
    _, report = decoded(
        body(user(text("see"), {"type": "image", "source": {"type": "file", "file_id": "f"}}))
    )
    assert report.dropped == ["messages[0].content[1]"]


def test_a_pdf_document_keeps_its_bytes_media_type_and_title() -> None:
    data = base64.b64encode(b"%PDF-1.4 x").decode()
    request, _ = decoded(
        body(
            user(
                {
                    "type": "document",
                    "title": "spec",
                    "source": {"type": "base64", "media_type": "application/pdf", "data": data},
                }
            )
        )
    )
    document = request.items[0].parts[0]
    assert (document.type, document.media_type, document.data, document.size, document.filename) == (
        "document",
        "application/pdf",
        data,
        10,
        "spec",
    )


def test_a_plain_text_document_is_a_text_document() -> None:
    request, _ = decoded(
        body(
            user(
                {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "héllo"}}
            )
        )
    )
    document = request.items[0].parts[0]
    assert (document.media_type, document.decoded_text()) == ("text/plain", "héllo")


def test_document_context_and_citations_are_reported() -> None:
    block = {
        "type": "document",
        "context": "ctx",
        "citations": {"enabled": True},
        "source": {"type": "url", "url": "https://example.com/a.pdf"},
    }
    request, report = decoded(body(user(block)))
    assert request.items[0].parts[0].url == "https://example.com/a.pdf"
    assert report.dropped == ["messages[0].content[0].context", "messages[0].content[0].citations"]


def test_a_document_whose_data_is_not_base64_is_refused() -> None:
    with pytest.raises(MalformedRequest):
        decoded(
            body(
                user(
                    {
                        "type": "document",
                        "source": {"type": "base64", "media_type": "application/pdf", "data": "not base64!"},
                    }
                )
            )
        )


def test_tool_use_and_tool_result_become_a_call_and_its_result() -> None:
    request, report = decoded(
        body(
            user("run it"),
            assistant(text("ok"), tool_use("toolu_1", "Bash", command="ls")),
            user(tool_result("toolu_1", "a.txt"), text("and?")),
        )
    )
    kinds = [item.type for item in request.items]
    assert kinds == ["message", "message", "tool_call", "tool_result", "message"]
    call, result = request.items[2], request.items[3]
    assert (call.call_id, call.name, json.loads(call.arguments)) == ("toolu_1", "Bash", {"command": "ls"})
    assert (result.call_id, [p.text for p in result.parts]) == ("toolu_1", ["a.txt"])
    assert not report


def test_a_tool_result_of_blocks_keeps_its_text_and_images() -> None:
    content = [
        text("out"),
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA"}},
    ]
    request, _ = decoded(body(user("q"), assistant(tool_use("t1", "Read")), user(tool_result("t1", content))))
    result = request.items[-1]
    assert [part.type for part in result.parts] == ["text", "image"]


def test_an_error_tool_result_keeps_its_text_and_its_flag() -> None:
    request, report = decoded(
        body(user("q"), assistant(tool_use("t1", "Bash")), user(tool_result("t1", "exit 1", is_error=True)))
    )
    assert request.items[-1].parts[0].text == "exit 1"
    assert request.items[-1].is_error is True
    assert not report


def test_a_tool_result_without_is_error_is_no_error() -> None:
    request, _ = decoded(body(user("q"), assistant(tool_use("t1", "Bash")), user(tool_result("t1", "ok"))))
    assert request.items[-1].is_error is False


def test_a_thinking_block_with_anthropics_signature_is_anthropic_state() -> None:
    request, _ = decoded(
        body(
            user("q"),
            assistant({"type": "thinking", "thinking": "hmm", "signature": "EqQB"}, text("a")),
            user("again"),
        )
    )
    reasoning = request.items[1]
    assert reasoning.summary == ["hmm"]
    assert (reasoning.state.dialect, reasoning.state.signature, reasoning.state.text) == (
        "anthropic",
        "EqQB",
        "hmm",
    )


def test_redacted_thinking_is_anthropic_redacted_state() -> None:
    request, _ = decoded(
        body(user("q"), assistant({"type": "redacted_thinking", "data": "opaque"}, text("a")))
    )
    assert (request.items[1].state.dialect, request.items[1].state.redacted) == ("anthropic", "opaque")


def test_a_thinking_signature_with_the_gateways_marker_that_cannot_be_read_is_reported() -> None:
    _, report = decoded(
        body(user("q"), assistant({"type": "thinking", "thinking": "", "signature": "dgw1:!!"}))
    )
    assert report.dropped == ["messages[1].content[0].signature"]


def test_a_web_search_pair_becomes_a_search_with_anthropics_blocks() -> None:
    use = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "news"}}
    result = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}
    request, report = decoded(body(user("q"), assistant(use, result, text("found"))))
    search = request.items[1]
    assert (search.type, search.query, search.state.blocks) == ("web_search", "news", [use, result])
    assert not report.dropped


def test_other_server_tool_blocks_are_reported() -> None:
    block = {"type": "web_fetch_tool_result", "tool_use_id": "x", "content": {}}
    _, report = decoded(body(user("q"), assistant(block, text("a"))))
    assert report.dropped == ["messages[1].content[0]"]


def test_a_message_of_an_unknown_role_is_refused() -> None:
    with pytest.raises(MalformedRequest):
        decoded(body({"role": "tool", "content": "x"}))


# -- tools ----------------------------------------------------------------------------------------


def test_a_client_tool_is_a_function_with_its_schema_and_strictness() -> None:
    request, report = decoded(body(tools=[tool("Bash", strict=True)]))
    declared = request.tools[0]
    assert (declared.kind, declared.name, declared.description, declared.strict) == (
        "function",
        "Bash",
        "the Bash tool",
        True,
    )
    assert declared.parameters == tool("Bash")["input_schema"]
    assert not report


def test_tool_input_streaming_is_cosmetic_and_cache_control_and_input_examples_kept() -> None:
    request, report = decoded(
        body(
            tools=[
                tool(
                    "A",
                    cache_control={"type": "ephemeral"},
                    eager_input_streaming=True,
                    input_examples=[{"x": "1"}],
                )
            ]
        )
    )
    assert report.dropped == report.cosmetic == ["tools[0].eager_input_streaming"]
    assert request.tools[0].input_examples == [{"x": "1"}]
    assert request.tools[0].cache == CacheMark(origin="tools[0].cache_control")


@pytest.mark.parametrize("examples", [{"x": "1"}, ["not an object"]])
def test_input_examples_that_are_not_objects_are_refused(examples: object) -> None:
    with pytest.raises(MalformedRequest, match=r"tools\[0\]\.input_examples"):
        decoded(body(tools=[tool("A", input_examples=examples)]))


def test_a_deferred_tool_is_offered_once_a_tool_reference_loads_it() -> None:
    request, report = decoded(
        body(
            user("find a tool"),
            assistant(tool_use("t1", "ToolSearch", query="x")),
            user(tool_result("t1", [{"type": "tool_reference", "tool_name": "Deferred"}])),
            tools=[tool("ToolSearch"), tool("Deferred", defer_loading=True)],
        )
    )
    assert [t.name for t in request.tools] == ["ToolSearch", "Deferred"]
    assert request.items[-1].parts[0].text == "Tool loaded: Deferred"
    assert not report


def test_web_search_is_the_irs_hosted_search() -> None:
    location = {"type": "approximate", "city": "Paris", "country": "FR"}
    request, report = decoded(
        body(
            tools=[
                {
                    "type": "web_search_20250305",
                    "name": "web_search",
                    "max_uses": 3,
                    "allowed_domains": ["example.com"],
                    "user_location": location,
                }
            ]
        )
    )
    search = request.tools[0]
    assert (search.kind, search.allowed_domains, search.user_location) == (
        "web_search",
        ["example.com"],
        location,
    )
    assert report.dropped == ["tools[0].max_uses"]


@pytest.mark.parametrize(
    "kind",
    [
        "bash_20250124",
        "text_editor_20250728",
        "code_execution_20250825",
        "web_fetch_20250910",
        "memory_20250818",
        "tool_search_tool_bm25_20251119",
    ],
)
def test_anthropic_defined_tools_are_reported(kind: str) -> None:
    request, report = decoded(body(tools=[{"type": kind, "name": "x"}]))
    assert request.tools == []
    assert report.dropped == ["tools[0]"]


@pytest.mark.parametrize(
    ("choice", "mode", "parallel"),
    [
        ({"type": "auto"}, "auto", None),
        ({"type": "any"}, "required", None),
        ({"type": "none"}, "none", None),
        ({"type": "any", "disable_parallel_tool_use": True}, "required", False),
        ({"type": "auto", "disable_parallel_tool_use": False}, "auto", None),
    ],
)
def test_tool_choice_modes(choice: dict, mode: str, parallel: bool | None) -> None:
    request, _ = decoded(body(tool_choice=choice, tools=[tool("A")]))
    assert (request.tool_choice.mode, request.parallel_tool_calls) == (mode, parallel)


def test_tool_choice_of_one_tool_names_it() -> None:
    request, _ = decoded(
        body(tool_choice={"type": "tool", "name": "A", "disable_parallel_tool_use": True}, tools=[tool("A")])
    )
    assert (request.tool_choice.mode, request.tool_choice.name, request.parallel_tool_calls) == (
        "tool",
        "A",
        False,
    )


def test_an_unknown_tool_choice_is_refused() -> None:
    with pytest.raises(MalformedRequest):
        decoded(body(tool_choice={"type": "required"}))


# -- thinking and effort ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("thinking", "output_config", "effort", "summary"),
    [
        ({"type": "adaptive"}, {"effort": "high"}, "high", "auto"),
        ({"type": "adaptive", "display": "omitted"}, {"effort": "medium"}, "medium", None),
        ({"type": "adaptive", "display": "summarized"}, None, None, "auto"),
        ({"type": "disabled"}, None, "none", None),
        ({"type": "enabled", "budget_tokens": 2048}, None, "low", "auto"),
        ({"type": "enabled", "budget_tokens": 10_000}, None, "medium", "auto"),
        ({"type": "enabled", "budget_tokens": 20_000}, None, "high", "auto"),
        ({"type": "enabled", "budget_tokens": 64_000}, None, "xhigh", "auto"),
        ({"type": "enabled", "budget_tokens": 64_000}, {"effort": "low"}, "low", "auto"),
        (None, {"effort": "xhigh"}, "xhigh", None),
        (None, {"effort": "max"}, "xhigh", None),
    ],
)
def test_thinking_and_effort_become_the_irs_effort(thinking, output_config, effort, summary) -> None:
    fields = {k: v for k, v in (("thinking", thinking), ("output_config", output_config)) if v is not None}
    request, report = decoded(body(**fields))
    assert (request.reasoning.effort, request.reasoning.summary) == (effort, summary)
    assert not report.dropped


def test_effort_beside_disabled_thinking_is_reported() -> None:
    request, report = decoded(body(thinking={"type": "disabled"}, output_config={"effort": "high"}))
    assert request.reasoning.effort == "none"
    assert report.dropped == ["output_config.effort"]


def test_an_unknown_effort_is_refused() -> None:
    with pytest.raises(MalformedRequest):
        decoded(body(output_config={"effort": "huge"}))


def test_structured_output_is_the_irs_output_schema() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    request, _ = decoded(body(output_config={"format": {"type": "json_schema", "schema": schema}}))
    assert request.output_schema == {"name": "output", "schema": schema, "strict": True}


def test_a_task_budget_is_reported() -> None:
    _, report = decoded(body(output_config={"task_budget": {"type": "tokens", "total": 10}}))
    assert report.dropped == ["output_config.task_budget"]


# -- sampling, limits, metadata -------------------------------------------------------------------


def test_sampling_and_max_tokens_are_translated() -> None:
    request, report = decoded(body(max_tokens=500, temperature=0.2, top_p=0.9, stream=True))
    assert (request.max_output_tokens, request.temperature, request.top_p, request.stream) == (
        500,
        0.2,
        0.9,
        True,
    )
    assert not report


def test_an_integer_temperature_is_a_float_in_the_ir() -> None:
    request, _ = decoded(body(temperature=1, top_p=1))
    assert (repr(request.temperature), repr(request.top_p)) == ("1.0", "1.0")


@pytest.mark.parametrize("key", ["temperature", "top_p"])
def test_a_number_past_a_float_is_refused_with_its_field(key: str) -> None:
    with pytest.raises(MalformedRequest) as refused:  # the standard parser reads such integers exactly
        decoded(body(**{key: 10**400}))
    assert refused.value.param == key


def test_missing_max_tokens_is_refused() -> None:
    raw = body()
    del raw["max_tokens"]
    with pytest.raises(MalformedRequest):
        decoded(raw)


def test_top_k_and_stop_sequences_are_translated() -> None:
    request, report = decoded(body(top_k=5, stop_sequences=["END", "###"]))
    assert (request.top_k, request.stop_sequences) == (5, ["END", "###"])
    assert not report


def test_no_top_k_and_no_stop_sequences_ask_for_none() -> None:
    request, report = decoded(body(stop_sequences=[]))
    assert (request.top_k, request.stop_sequences) == (None, [])
    assert not report


@pytest.mark.parametrize(("field", "value"), [("top_k", -1), ("top_k", 2.5), ("top_k", True),
                                              ("stop_sequences", "END"), ("stop_sequences", ["END", 3])])
def test_a_malformed_top_k_or_stop_sequences_is_refused(field: str, value: object) -> None:
    with pytest.raises(MalformedRequest, match=field):
        decoded(body(**{field: value}))


def test_metadata_user_id_is_the_end_user() -> None:
    request, report = decoded(body(metadata={"user_id": "u-1"}))
    assert request.user == "u-1"
    assert not report


@pytest.mark.parametrize("key", ["service_tier", "inference_geo", "speed"])
def test_capacity_fields_are_cosmetic(key: str) -> None:
    _, report = decoded(body(**{key: "auto"}))
    assert report.cosmetic == [key]


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("mcp_servers", [{"type": "url", "url": "https://mcp.example.com", "name": "m"}]),
        ("container", "container_1"),
        ("fallbacks", "default"),
    ],
)
def test_anthropic_platform_fields_are_reported_lossy(key: str, value: object) -> None:
    _, report = decoded(body(**{key: value}))
    assert report.lossy == [key]


def test_a_thread_continuation_is_refused_with_anthropics_400() -> None:
    with pytest.raises(UnsupportedFeature) as caught:
        decoded(body(thread={"type": "continue", "previous_message_id": "msg_1"}))
    status, error = errors.refusal(caught.value)
    assert status == 400
    assert error["type"] == "error" and error["error"]["type"] == "invalid_request_error"
    assert error["error"]["message"].startswith("thread: ")


def test_a_compaction_request_is_refused() -> None:
    with pytest.raises(UnsupportedFeature):
        decoded(body(compaction={"type": "compact"}))


def test_an_unknown_message_key_is_reported() -> None:
    _, report = decoded(body({"role": "user", "content": "x", "name": "bob"}))
    assert report.dropped == ["messages[0].name"]


def test_a_thinking_block_with_neither_text_nor_signature_carries_nothing() -> None:
    request, report = decoded(
        body(user("q"), assistant({"type": "thinking", "thinking": "", "signature": ""}, text("a")))
    )
    assert [item.type for item in request.items] == ["message", "message"]
    assert not report


def test_the_effort_of_a_cleared_system_message_no_longer_applies() -> None:
    cleared = system_message("x", clear_at="next_user_message", output_config={"effort": "low"})
    request, _ = decoded(body(user("a"), cleared, user("b"), output_config={"effort": "high"}))
    assert request.reasoning.effort == "high"


# -- prompt-cache breakpoints ----------------------------------------------------------------------


def test_every_block_keeps_its_breakpoint_and_its_ttl() -> None:
    hour = {"type": "ephemeral", "ttl": "1h"}
    request, report = decoded(body(
        user(text("q", cache_control=hour)),
        assistant({**tool_use("t1", "Bash"), "cache_control": {"type": "ephemeral"}}),
        user(tool_result("t1", "out", cache_control={"type": "ephemeral"})),
    ))
    assert not report
    question, call, result = request.items
    assert question.parts[0].cache == CacheMark(ttl="1h", origin="messages[0].content[0].cache_control")
    assert call.cache == CacheMark(origin="messages[1].content[0].cache_control")
    assert result.cache == CacheMark(origin="messages[2].content[0].cache_control")


def test_a_breakpoint_inside_a_tool_result_is_the_results() -> None:
    nested = tool_result("t1", [text("out", cache_control={"type": "ephemeral"})])
    request, _ = decoded(body(user("q"), assistant(tool_use("t1", "Bash")), user(nested)))
    result = request.items[-1]
    assert result.cache == CacheMark(origin="messages[2].content[0].content[0].cache_control")
    assert result.parts[0].cache is None


def test_the_top_level_cache_control_is_the_automatic_breakpoint() -> None:
    request, report = decoded(body(cache_control={"type": "ephemeral", "ttl": "1h"}))
    assert request.cache.auto == CacheMark(ttl="1h", origin="cache_control")
    assert not report


@pytest.mark.parametrize("mark, message", [
    ({"type": "persistent"}, "must be"),
    ({"type": "ephemeral", "ttl": "2h"}, "5m or 1h"),
    ("ephemeral", "must be"),
])
def test_a_malformed_cache_control_is_refused(mark: object, message: str) -> None:
    with pytest.raises(MalformedRequest, match=message):
        decoded(body(user(text("q", cache_control=mark))))


def test_more_than_four_breakpoints_are_refused_as_anthropic_refuses_them() -> None:
    marked = [text(f"b{i}", cache_control={"type": "ephemeral"}) for i in range(4)]
    with pytest.raises(MalformedRequest, match="A maximum of 4 blocks with cache_control may be provided"):
        decoded(body(user(*marked), cache_control={"type": "ephemeral"}))


def test_an_hour_breakpoint_after_a_five_minute_one_is_refused() -> None:
    five, hour = {"type": "ephemeral"}, {"type": "ephemeral", "ttl": "1h"}
    decoded(body(user(text("q", cache_control=five)), system=[text("s", cache_control=hour)]))  # in order
    with pytest.raises(MalformedRequest, match=r"messages\[0\]\.content\[0\]\.cache_control: .*not follow"):
        decoded(body(user(text("q", cache_control=hour)), system=[text("s", cache_control=five)]))


def test_keys_of_later_betas_beside_the_ttl_are_reported_and_the_breakpoint_kept() -> None:
    # Claude Code 2.1.328 writes `scope: "global"` on its system prompt's breakpoint and
    # `evict_on_complete` on a top-level one (its bundle's cache_control builders)
    scoped = {"type": "ephemeral", "scope": "global"}
    request, report = decoded(body(system=[text("s", cache_control=scoped)],
                                   cache_control={"type": "ephemeral", "evict_on_complete": True}))
    assert request.cache.system == {0: CacheMark(origin="system[0].cache_control")}
    assert request.cache.auto == CacheMark(origin="cache_control")
    assert report.dropped == report.cosmetic == ["system[0].cache_control.scope",
                                                 "cache_control.evict_on_complete"]
