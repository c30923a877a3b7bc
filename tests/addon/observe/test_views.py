"""addon/observe/views.py: the Translation and SSE events content views (mitmproxy 12 contentview API).

Views are rendered the way mitmweb renders them, through `contentviews.prettify_message` with
view "auto", so each test also checks which view mitmproxy picks.
"""

from __future__ import annotations

import binascii
import json
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mitmproxy import contentviews, http
from mitmproxy.test import taddons, tflow

from addon.observe import views
from tests.support import toy_dialect
from translators.wire import viewtext

ROOT = Path(__file__).resolve().parents[3]

CLIENT = {
    "model": "gpt-5.5", "stream": True, "instructions": "Be brief.",
    "input": [
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "rules"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {"type": "function_call", "call_id": "c1", "name": "exec_command", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "ok"},
    ],
    "tools": [
        {"type": "function", "name": "exec_command", "parameters": {}},
        {"type": "namespace", "name": "agents", "tools": [{"type": "function", "name": "spawn"}]},
        {"type": "web_search"},
    ],
    "text": {"verbosity": "low"}, "store": False,
}
UPSTREAM = {
    "model": "claude-sonnet-4-6", "max_tokens": 32000, "stream": True,
    "system": [{"type": "text", "text": "Be brief."}, {"type": "text", "text": "rules"}],
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant",
         "content": [{"type": "tool_use", "id": "c1", "name": "exec_command", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "ok"}]},
    ],
    "tools": [{"name": "exec_command", "input_schema": {}}, {"name": "agents__spawn", "input_schema": {}}],
}
INFO = {"upstream": "anthropic", "model": "claude-sonnet-4-6", "client_model": "gpt-5.5",
        "url": "https://api.anthropic.com/v1/messages", "dropped": ["tools[2]", "text.verbosity"],
        "cosmetic": ["text.verbosity"], "notes": ["no upstream key: $ANTHROPIC_API_KEY is not set"]}
TRANSLATION = {"target": "anthropic", "model": "claude-sonnet-4-6", "client_model": "gpt-5.5",
               "path": "/v1/messages", "stream": True, "dropped": [], "notes": [],
               "tools": {"by_wire": {"exec_command": {"name": "exec_command", "namespace": None},
                                     "agents__spawn": {"name": "spawn", "namespace": "agents"}}}}


def sse(*events: tuple[str | None, Any]) -> bytes:
    out = b""
    for name, payload in events:
        head = f"event: {name}\n" if name else ""
        data = payload if isinstance(payload, str) else json.dumps(payload)
        out += f"{head}data: {data}\n\n".encode()
    return out


CLIENT_STREAM = sse(
    ("response.created", {"type": "response.created", "sequence_number": 0,
                          "response": {"id": "resp_1", "status": "in_progress", "model": "gpt-5.5"}}),
    ("response.output_item.added", {"type": "response.output_item.added", "sequence_number": 1,
                                    "output_index": 0, "item": {"id": "msg_1", "type": "message"}}),
    ("response.output_text.delta", {"type": "response.output_text.delta", "sequence_number": 2,
                                    "output_index": 0, "item_id": "msg_1", "delta": "Hello\nthere"}),
)
UPSTREAM_STREAM = sse(
    ("message_start", {"type": "message_start", "message": {"id": "msg_up", "model": "claude-x"}}),
    ("content_block_start", {"type": "content_block_start", "index": 0,
                             "content_block": {"type": "text", "text": ""}}),
    ("content_block_delta", {"type": "content_block_delta", "index": 0,
                             "delta": {"type": "text_delta", "text": "Hello"}}),
    ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                       "usage": {"output_tokens": 7}}),
)


@pytest.fixture(autouse=True)
def _options() -> Iterator[None]:
    """`prettify_message` reads ctx.options; the Views addon registers both views on load."""
    with taddons.context(views.Views()):
        yield


def gateway_flow(**metadata: Any) -> http.HTTPFlow:
    request = http.Request.make("POST", "https://api.anthropic.com/v1/messages",
                                json.dumps(UPSTREAM).encode(), {"content-type": "application/json"})
    response = http.Response.make(200, CLIENT_STREAM, {"content-type": "text/event-stream"})
    flow = tflow.tflow(req=request, resp=response)
    flow.metadata.update({"gateway": INFO, "gateway.client_request": json.dumps(CLIENT),
                          "gateway.translation": TRANSLATION, "gateway.upstream_response": UPSTREAM_STREAM})
    flow.metadata.update(metadata)
    return flow


def render(flow: http.HTTPFlow, message: http.Message, view: str = "auto") -> contentviews.ContentviewResult:
    return contentviews.prettify_message(message, flow, view_name=view)


def request_text(flow: http.HTTPFlow | None = None) -> str:
    flow = flow or gateway_flow()
    return render(flow, flow.request).text


def response_text(flow: http.HTTPFlow | None = None) -> str:
    flow = flow or gateway_flow()
    assert flow.response is not None
    return render(flow, flow.response).text


def lines_with(text: str, needle: str) -> list[str]:
    return [line for line in text.splitlines() if needle in line]


def said(text: str, expected: str) -> bool:
    """Whether a line of `text` holds `expected`'s words in order, however the columns are padded."""
    words = " ".join(expected.split())
    return any(words in " ".join(line.split()) for line in text.splitlines())


# -- registration --------------------------------------------------------------------------------
def test_loading_the_views_addon_registers_both_views() -> None:
    for name in ("translation", "sse events"):
        contentviews.registry._by_name.pop(name, None)
    with taddons.context(views.Views()):
        assert {"translation", "sse events"} <= set(contentviews.registry)


def test_loading_the_gateway_script_registers_both_views() -> None:
    for name in ("translation", "sse events"):
        contentviews.registry._by_name.pop(name, None)
    with taddons.context() as tctx:
        tctx.script(str(ROOT / "addon" / "gateway.py"))
        assert {"translation", "sse events"} <= set(contentviews.registry)


# -- Translation view ------------------------------------------------------------------------------
def test_translation_is_picked_for_a_gateway_request() -> None:
    flow = gateway_flow()
    assert render(flow, flow.request).view_name == "Translation"


def test_translation_is_not_picked_for_a_plain_flow() -> None:
    flow = tflow.tflow(req=http.Request.make("POST", "https://example.com/", b'{"a": 1}',
                                             {"content-type": "application/json"}))
    assert render(flow, flow.request).view_name == "JSON"


def test_translation_chosen_by_hand_on_a_plain_flow_says_why_it_cannot_render() -> None:
    flow = tflow.tflow()
    assert "not a gateway flow" in render(flow, flow.request, view="Translation").text


def test_translation_lists_each_dropped_path_with_its_kind_and_the_clients_value() -> None:
    text = request_text()
    assert lines_with(text, "dropped (")[0].split() == ["dropped", "(2:", "1", "lossy,", "1", "cosmetic):"]
    assert lines_with(text, "- lossy: tools[2] =")[0].endswith('{"type":"web_search"}')
    assert lines_with(text, "- cosmetic: text.verbosity =")[0].endswith('"low"')


def test_translation_of_a_flow_saved_before_drops_had_kinds_shows_them_lossy() -> None:
    text = request_text(gateway_flow(gateway={**INFO, "cosmetic": None}))
    assert lines_with(text, "dropped (")[0].split() == ["dropped", "(2:", "2", "lossy,", "0", "cosmetic):"]
    assert lines_with(text, "- lossy: text.verbosity =")


def test_translation_lists_the_notes() -> None:
    assert "  - no upstream key: $ANTHROPIC_API_KEY is not set" in request_text()


def test_translation_starts_with_the_dialects_and_models() -> None:
    first = request_text().splitlines()[0]
    assert said(first, "Responses -> Anthropic Messages (gpt-5.5 -> claude-sonnet-4-6)")


def test_translation_says_when_a_flow_was_a_compaction() -> None:
    text = request_text(gateway_flow(gateway={**INFO, "kind": "compaction"}))
    assert lines_with(text, "kind: compaction")
    assert not lines_with(request_text(), "kind:")


def test_translation_compares_the_model() -> None:
    assert said(request_text(), "model gpt-5.5 -> claude-sonnet-4-6")


def test_translation_compares_instructions_with_the_system_prompt() -> None:
    text = request_text()
    assert said(text, "system instructions (9 chars); 1 developer/system message(s) in input (5 chars)")
    assert said(text, "-> system: 2 block(s) (14 chars)")


def test_translation_counts_items_by_type() -> None:
    text = request_text()
    assert said(text, "items 4: message/developer, message/user, function_call, function_call_output")
    assert said(text, "-> 3: user[text], assistant[tool_use], user[tool_result]")


def test_translation_shows_tools_kept_renamed_and_not_sent() -> None:
    text = request_text()
    assert said(text, "tools 3 -> 2")
    assert lines_with(text, "same:")[0].split("same:")[1].strip() == "exec_command"
    assert lines_with(text, "renamed:")[0].split("renamed:")[1].strip() == "agents.spawn -> agents__spawn"
    assert lines_with(text, "not sent:")[0].split("not sent:")[1].strip() == "web_search"


def test_translation_shows_top_level_fields_of_each_side() -> None:
    text = request_text()
    assert said(text, "stream: true -> true")
    client_only = text.index("  client only:")
    upstream_only = text.index("  upstream only:")
    assert client_only < text.index("    store: false") < upstream_only < text.index("    max_tokens: 32000")


def test_translation_ends_with_both_bodies_in_full() -> None:
    text = request_text()
    client_at = text.index("── client request (Responses,")
    upstream_at = text.index("── upstream request (Anthropic Messages,")
    assert client_at < text.index('"verbosity": "low"') < upstream_at < text.index('"max_tokens": 32000')


def test_translation_of_a_refused_request_shows_the_reason_and_the_client_request() -> None:
    info = {**INFO, "refused": "model not allowed", "dropped": [], "notes": []}
    flow = gateway_flow(gateway=info)
    del flow.metadata["gateway.translation"]
    text = request_text(flow)
    assert "REFUSED: model not allowed" in text
    assert "No upstream request" in text
    assert '"instructions": "Be brief."' in text


def test_translation_reads_a_gemini_request() -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
            "systemInstruction": {"parts": [{"text": "Be brief."}]},
            "tools": [{"functionDeclarations": [{"name": "exec_command"}]}, {"googleSearch": {}}]}
    flow = gateway_flow(**{
        "gateway": {**INFO, "upstream": "gemini", "model": "gemini-2.5-pro"},
        "gateway.translation": {**TRANSLATION, "target": "gemini", "model": "gemini-2.5-pro"}})
    flow.request.content = json.dumps(body).encode()
    text = request_text(flow)
    assert said(text, "model gpt-5.5 -> gemini-2.5-pro")
    assert said(text, "-> systemInstruction: 1 part(s) (9 chars)")
    assert said(text, "-> 1: user[text]")
    assert "googleSearch" in lines_with(text, "added:")[0]


def test_translation_reads_a_bedrock_request() -> None:
    body = {"messages": [{"role": "user", "content": [{"text": "hi"}]}], "system": [{"text": "Be brief."}],
            "toolConfig": {"tools": [{"toolSpec": {"name": "exec_command"}}]},
            "inferenceConfig": {"maxTokens": 100}}
    flow = gateway_flow(**{"gateway": {**INFO, "upstream": "bedrock"},
                           "gateway.translation": {**TRANSLATION, "target": "bedrock"}})
    flow.request.content = json.dumps(body).encode()
    text = request_text(flow)
    assert said(text, "-> system: 1 block(s) (9 chars)")
    assert said(text, "-> 1: user[text]")
    assert '    inferenceConfig: {"maxTokens":100}' in text


def test_translation_reads_a_chat_request() -> None:
    body = {"model": "deepseek-chat", "messages": [{"role": "system", "content": "Be brief."},
                                                   {"role": "user", "content": "hi"}],
            "tools": [{"type": "function", "function": {"name": "exec_command"}}]}
    flow = gateway_flow(**{"gateway": {**INFO, "upstream": "chat"},
                           "gateway.translation": {**TRANSLATION, "target": "chat"}})
    flow.request.content = json.dumps(body).encode()
    text = request_text(flow)
    assert said(text, "-> 1 system/developer message(s) (9 chars)")
    assert said(text, "-> 2: system, user")


# -- SSE events view -------------------------------------------------------------------------------
def test_sse_events_is_picked_for_a_gateway_response() -> None:
    flow = gateway_flow()
    assert flow.response is not None
    assert render(flow, flow.response).view_name == "SSE events"


def test_sse_events_is_picked_for_any_event_stream_response() -> None:
    flow = tflow.tflow(resp=http.Response.make(200, CLIENT_STREAM, {"content-type": "text/event-stream"}))
    assert flow.response is not None
    result = render(flow, flow.response)
    assert result.view_name == "SSE events"
    assert result.text.startswith("── events: 3 events")


def test_sse_events_is_not_picked_for_a_plain_json_response() -> None:
    flow = tflow.tflow(resp=http.Response.make(200, b'{"a": 1}', {"content-type": "application/json"}))
    assert flow.response is not None
    assert render(flow, flow.response).view_name == "JSON"


def test_sse_events_gives_one_line_per_event_with_item_and_delta_preview() -> None:
    text = response_text()
    assert lines_with(text, "response.output_text.delta  #0")[-1].split() == [
        "2", "response.output_text.delta", "#0", "msg_1", '"Hello\\nthere"']
    assert said(text, "response.output_item.added #0 msg_1 (message)")


def test_sse_events_counts_events_by_type() -> None:
    counts = response_text().split("── what the client got")[1].split("\n\n")[0]
    assert " ".join(counts.split()[-6:]) == (
        "response.created ×1, response.output_item.added ×1, response.output_text.delta ×1")


def test_sse_events_shows_the_upstream_stream_under_its_own_heading() -> None:
    text = response_text()
    heading = text.index("── what the upstream sent (Anthropic Messages): 4 events")
    assert text.index("── what the client got (Responses): 3 events") < heading
    assert heading < text.index("content_block_delta  #0  text_delta  \"Hello\"")


def test_sse_events_puts_both_headings_first_as_an_overview() -> None:
    overview = response_text().split("\n\n")[0].splitlines()
    assert [line.split(":")[0] for line in overview[-2:]] == [
        "what the client got (Responses)", "what the upstream sent (Anthropic Messages)"]


def test_sse_events_heads_the_answer_with_lossy_and_cosmetic_drops_apart() -> None:
    overview = response_text().split("\n\n")[0].splitlines()
    assert "dropped: tools[2]" in overview
    assert "cosmetic: text.verbosity" in overview


def test_sse_events_describes_anthropic_events() -> None:
    text = response_text()
    assert said(text, "message_start msg_up claude-x")
    assert said(text, "content_block_start #0 text")
    assert said(text, "message_delta stop_reason=end_turn out=7")


def test_sse_events_says_when_no_upstream_answer_was_kept() -> None:
    flow = gateway_flow()
    del flow.metadata["gateway.upstream_response"]
    assert "what the upstream sent: nothing kept" in response_text(flow)


def test_sse_events_pretty_prints_a_whole_json_answer() -> None:
    flow = gateway_flow(**{"gateway.upstream_response": b'{"type": "message", "id": "msg_up"}'})
    text = response_text(flow)
    assert "what the upstream sent (Anthropic Messages): 35 bytes, not a stream" in text
    assert '  "id": "msg_up"' in text


def test_sse_events_describes_chat_chunks() -> None:
    call = {"index": 0, "id": "call_1", "function": {"name": "exec_command", "arguments": "{\"c"}}
    stream = sse((None, {"object": "chat.completion.chunk",
                         "choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}),
        (None, {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {},
                                                               "finish_reason": "tool_calls"}]}),
        (None, "[DONE]"))
    flow = gateway_flow(**{"gateway": {**INFO, "upstream": "chat"}, "gateway.upstream_response": stream})
    text = response_text(flow)
    assert 'chat.completion.chunk  #0  tool_call[0]  call_1  exec_command  "{\\"c"' in text
    assert said(text, "chat.completion.chunk #0 finish_reason=tool_calls")
    assert 'message                "[DONE]"' in text


def test_sse_events_describes_gemini_chunks() -> None:
    stream = sse((None, {"candidates": [{"content": {"parts": [{"text": "Hi", "thought": True}]}}]}),
                 (None, {"candidates": [{"content": {"parts": [{"functionCall": {"name": "ls", "args": {}}}]},
                                         "finishReason": "STOP"}],
                         "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 4}}))
    flow = gateway_flow(**{"gateway": {**INFO, "upstream": "gemini"}, "gateway.upstream_response": stream})
    text = response_text(flow)
    assert 'chunk  thought "Hi"' in text
    assert said(text, "chunk functionCall ls {} finishReason=STOP in=3 out=4")


def eventstream_frame(event_type: str, payload: dict[str, Any]) -> bytes:
    """One AWS event-stream frame (string headers), as Bedrock's ConverseStream sends it."""
    headers = b""
    for name, value in ((":event-type", event_type), (":content-type", "application/json"),
                        (":message-type", "event")):
        headers += bytes([len(name)]) + name.encode() + b"\x07"  # 7: a string header
        headers += struct.pack(">H", len(value)) + value.encode()
    body = json.dumps(payload).encode()
    prelude = struct.pack(">II", 16 + len(headers) + len(body), len(headers))
    prelude += struct.pack(">I", binascii.crc32(prelude))
    message = prelude + headers + body
    return message + struct.pack(">I", binascii.crc32(message))


def test_sse_events_decodes_bedrocks_binary_event_stream() -> None:
    stream = (eventstream_frame("messageStart", {"role": "assistant", "p": "abc"})
              + eventstream_frame("contentBlockDelta",
                                  {"contentBlockIndex": 0, "delta": {"text": "Hi"}, "p": "ab"})
              + eventstream_frame("messageStop", {"stopReason": "end_turn"}))
    flow = gateway_flow(**{"gateway": {**INFO, "upstream": "bedrock"}, "gateway.upstream_response": stream})
    text = response_text(flow)
    assert "what the upstream sent (Bedrock Converse): 3 events" in text
    assert said(text, "messageStart role=assistant")
    assert 'contentBlockDelta  #0  text  "Hi"' in text
    assert said(text, "messageStop stopReason=end_turn")


def test_sse_events_reports_a_broken_event_stream_instead_of_failing() -> None:
    stream = eventstream_frame("messageStart", {"role": "assistant"})[:-1] + b"\xff"
    flow = gateway_flow(**{"gateway": {**INFO, "upstream": "bedrock"}, "gateway.upstream_response": stream})
    assert "not readable as events" in response_text(flow)


def test_sse_events_cuts_a_long_delta_to_one_short_line() -> None:
    stream = sse(("response.output_text.delta", {"type": "response.output_text.delta", "sequence_number": 0,
                                                 "item_id": "m", "delta": "x" * 500}))
    flow = tflow.tflow(resp=http.Response.make(200, stream, {"content-type": "text/event-stream"}))
    assert flow.response is not None
    line = lines_with(render(flow, flow.response).text, "response.output_text.delta  m")[0]
    assert line.endswith("x…")
    assert len(line.split("  m  ")[1]) == viewtext.PREVIEW


# -- a real translated flow ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> http.HTTPFlow:
    from addon.observe.replay import replay

    out = tmp_path_factory.mktemp("replay") / "out.flow"
    return replay(ROOT / "captures" / "codex-pelican-names-anthropic", out)


def test_a_replayed_flow_keeps_both_answers(replayed: http.HTTPFlow) -> None:
    assert replayed.response is not None
    assert replayed.response.content.startswith(b"event: response.created")
    assert replayed.metadata["gateway.upstream_response"].startswith(b"event: message_start")


def test_a_replayed_flow_renders_in_both_views(replayed: http.HTTPFlow) -> None:
    assert replayed.response is not None
    request, response = render(replayed, replayed.request), render(replayed, replayed.response)
    assert (request.view_name, response.view_name) == ("Translation", "SSE events")
    (line,) = lines_with(request.text, "- lossy: tools[9] = ")
    assert line.split(" = ")[1].startswith('{"type":"web_search"')
    recorded = (ROOT / "captures" / "codex-pelican-names-anthropic" / "upstream.body").read_bytes()
    events = sum(line.startswith(b"event:") for line in recorded.splitlines())
    assert f"what the upstream sent (Anthropic Messages): {events} events" in response.text


# -- a dialect registered from outside the package (tests/support/toy_dialect.py) ----------------
def _toy_flow() -> http.HTTPFlow:
    target = {"target": toy_dialect.NAME, "model": "lines-1"}
    flow = gateway_flow(**{"gateway": {**INFO, "upstream": toy_dialect.NAME, "model": "lines-1"},
                           "gateway.translation": {**TRANSLATION, **target},
                           "gateway.upstream_response": b"".join(toy_dialect.SAMPLE.stream)})
    flow.request.content = json.dumps({"model": "lines-1", "system": ["Be brief."],
                                       "lines": [{"role": "user", "text": "hi"}], "seed": 7}).encode()
    return flow


def test_translation_reads_a_request_of_a_registered_dialect_with_its_own_reader() -> None:
    text = request_text(_toy_flow())
    assert text.startswith("Responses -> Lines (toy)  (gpt-5.5 -> lines-1)")
    assert "->  system: 1 line(s)" in text
    assert "->  1: user[text]" in text
    assert "    seed: 7" in text


def test_sse_events_splits_and_describes_the_frames_of_a_registered_dialect() -> None:
    text = response_text(_toy_flow())
    assert "── what the upstream sent (Lines (toy)): 4 events" in text
    assert 'text  "Hello"' in text
    assert "done  done=stop  in=3 out=3" in text


def test_translation_of_an_unknown_dialect_says_so_and_never_reads_it_as_another() -> None:
    flow = gateway_flow(**{"gateway": {**INFO, "upstream": "nosuch"},
                           "gateway.translation": {**TRANSLATION, "target": "nosuch"}})
    text = request_text(flow)
    assert "->  (no view for dialect 'nosuch')" in text
    assert "->  0: none" in text


def lite_flow() -> http.HTTPFlow:
    """A real Codex Lite request (its tools inside an `additional_tools` input item), translated."""
    from translators import translate_request

    client = json.loads((ROOT / "tests/data/codex/request_lite_functions_namespace.json").read_text())
    translation = translate_request(client, "anthropic", "claude-sonnet-4-6")
    request = http.Request.make("POST", "https://api.anthropic.com/v1/messages",
                                json.dumps(translation.body).encode(), {"content-type": "application/json"})
    flow = tflow.tflow(req=request, resp=http.Response.make(200, CLIENT_STREAM))
    flow.metadata.update({"gateway": {**INFO, "dropped": [], "notes": []},
                          "gateway.client_request": json.dumps(client),
                          "gateway.translation": translation.model_dump(mode="json", exclude={"body"})})
    return flow


def test_translation_says_where_lite_tools_were_declared_and_adds_none() -> None:
    text = request_text(lite_flow())
    assert said(text, "tools 9 (declared in input[0] additional_tools) -> 9")
    assert "exec_command" in lines_with(text, "same:")[0]
    assert not lines_with(text, "added:"), text
