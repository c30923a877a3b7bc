"""IR request -> Gemini body (translators/gemini/request.py, contents.py)."""

from __future__ import annotations

import json

import pytest

from tests.translators.bodies import APPLY_PATCH_GRAMMAR, PATCH
from tests.translators.gemini.support import function_tool, gemini_body, translation

PNG = "data:image/png;base64,iVBORw0KGgo="


def user(*texts: str) -> dict:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": t} for t in texts]}


def developer(text: str) -> dict:
    return {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": text}]}


def assistant(text: str, **extra: object) -> dict:
    return {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}],
            **extra}


def image(url: str, **extra: object) -> dict:
    return {"type": "message", "role": "user",
            "content": [{"type": "input_image", "image_url": url, **extra}]}


def fcall(call_id: str, name: str, arguments: dict | None = None) -> dict:
    return {"type": "function_call", "call_id": call_id, "name": name,
            "arguments": json.dumps(arguments or {})}


def fout(call_id: str, output: object) -> dict:
    return {"type": "function_call_output", "call_id": call_id, "output": output}


# -- path and envelope -------------------------------------------------------------------------

def test_streaming_request_goes_to_stream_generate_content_with_sse() -> None:
    assert translation(user("hi")).path == "/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse"


def test_whole_answer_request_goes_to_generate_content() -> None:
    assert translation(user("hi"), stream=False).path == "/v1beta/models/gemini-3-pro-preview:generateContent"


def test_models_prefix_of_the_upstream_model_is_not_doubled() -> None:
    assert translation(user("hi"), model="models/gemini-2.5-flash").path.startswith(
        "/v1beta/models/gemini-2.5-flash:")


def test_body_names_no_model_and_no_key() -> None:
    t = translation(user("hi"))
    assert "model" not in t.body
    assert t.headers == {"content-type": "application/json"}


# -- system and messages -----------------------------------------------------------------------

def test_opening_developer_messages_become_the_system_instruction() -> None:
    body, _ = gemini_body(developer("Be brief."), developer("Use tools."), user("hi"))
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}, {"text": "Use tools."}]}


def test_namespace_descriptions_join_the_system_instruction() -> None:
    namespace = {"type": "namespace", "name": "mcp__db", "description": "Database tools.",
                 "tools": [function_tool("query")]}
    body, _ = gemini_body(user("hi"), tools=[namespace])
    assert "Database tools." in body["systemInstruction"]["parts"][-1]["text"]


def test_mid_conversation_system_message_becomes_user_text() -> None:
    body, _ = gemini_body(user("hi"), assistant("hello"), developer("Now be terse."))
    assert body["contents"][-1] == {"role": "user", "parts": [{"text": "Now be terse."}]}


def test_assistant_messages_are_model_turns_and_user_messages_user_turns() -> None:
    body, _ = gemini_body(user("hi"), assistant("hello"), user("again"))
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user"]


def test_consecutive_same_role_messages_share_one_turn() -> None:
    body, _ = gemini_body(user("one"), user("two"))
    assert body["contents"] == [{"role": "user", "parts": [{"text": "one"}, {"text": "two"}]}]


def test_message_phase_is_reported_dropped() -> None:
    _, report = gemini_body(user("hi"), assistant("hm", phase="commentary"), user("go"))
    assert "input[1].phase" in report.dropped


# -- images ------------------------------------------------------------------------------------

def test_data_url_image_becomes_inline_data() -> None:
    body, _ = gemini_body(image(PNG))
    assert body["contents"][0]["parts"] == [{"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}]


def test_http_image_becomes_file_data_with_its_media_type() -> None:
    body, _ = gemini_body(image("https://example.com/cat.jpeg?size=2"))
    assert body["contents"][0]["parts"] == [
        {"fileData": {"fileUri": "https://example.com/cat.jpeg?size=2", "mimeType": "image/jpeg"}}]


def test_http_image_of_unknown_media_type_is_reported_dropped() -> None:
    body, report = gemini_body(image("https://example.com/picture"), user("what is it?"))
    assert "input[0].content[0]" in report.dropped
    assert body["contents"] == [{"role": "user", "parts": [{"text": "what is it?"}]}]


def test_image_detail_is_reported_dropped() -> None:
    _, report = gemini_body(image(PNG, detail="high"))
    assert "input[0].content[0].detail" in report.dropped


# -- tool calls and results --------------------------------------------------------------------

def test_history_call_is_a_model_function_call_with_object_args_and_its_id() -> None:
    body, _ = gemini_body(user("run"), fcall("c1", "lookup", {"q": "x"}), fout("c1", "found"),
                          tools=[function_tool("lookup")])
    assert body["contents"][1]["role"] == "model"
    part = body["contents"][1]["parts"][0]
    assert part["functionCall"] == {"name": "lookup", "args": {"q": "x"}, "id": "c1"}


def test_tool_output_is_a_user_function_response_with_name_id_and_output_object() -> None:
    body, _ = gemini_body(user("run"), fcall("c1", "lookup"), fout("c1", "found"),
                          tools=[function_tool("lookup")])
    assert body["contents"][2] == {"role": "user", "parts": [
        {"functionResponse": {"name": "lookup", "response": {"output": "found"}, "id": "c1"}}]}


def test_tool_output_given_as_text_parts_is_joined() -> None:
    output = [{"type": "input_text", "text": "a"}, {"type": "input_text", "text": "b"}]
    body, _ = gemini_body(user("run"), fcall("c1", "lookup"), fout("c1", output),
                          tools=[function_tool("lookup")])
    assert body["contents"][2]["parts"][0]["functionResponse"]["response"] == {"output": "a\nb"}


def test_made_up_call_ids_are_not_shown_to_gemini() -> None:
    body, _ = gemini_body(user("run"), fcall("gcall_R_1", "lookup"), fout("gcall_R_1", "ok"),
                          tools=[function_tool("lookup")])
    assert "id" not in body["contents"][1]["parts"][0]["functionCall"]
    assert "id" not in body["contents"][2]["parts"][0]["functionResponse"]


def test_responses_to_parallel_calls_share_one_user_turn() -> None:
    body, _ = gemini_body(user("run"), fcall("a", "lookup"), fcall("b", "lookup"), fout("a", "1"),
                          fout("b", "2"), tools=[function_tool("lookup")])
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user"]
    assert [p["functionResponse"]["id"] for p in body["contents"][2]["parts"]] == ["a", "b"]


def test_freeform_call_history_is_sent_as_its_input_argument() -> None:
    custom = {"type": "custom_tool_call", "call_id": "p1", "name": "apply_patch", "input": PATCH}
    out = {"type": "custom_tool_call_output", "call_id": "p1", "output": "Done"}
    body, _ = gemini_body(user("patch"), custom, out)
    assert body["contents"][1]["parts"][0]["functionCall"]["args"] == {"input": PATCH}


def test_tool_output_image_rides_in_the_function_response_on_gemini_3() -> None:
    output = [{"type": "input_text", "text": "shot"}, {"type": "input_image", "image_url": PNG}]
    body, _ = gemini_body(user("look"), fcall("c1", "view_image"), fout("c1", output),
                          tools=[function_tool("view_image")])
    response = body["contents"][2]["parts"][0]["functionResponse"]
    assert response["parts"] == [{"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}]


def test_tool_output_image_is_reported_dropped_before_gemini_3() -> None:
    output = [{"type": "input_text", "text": "shot"}, {"type": "input_image", "image_url": PNG}]
    body, report = gemini_body(user("look"), fcall("c1", "view_image"), fout("c1", output),
                               tools=[function_tool("view_image")], model="gemini-2.5-flash")
    assert "parts" not in body["contents"][2]["parts"][0]["functionResponse"]
    assert "input[2].output[1]" in report.dropped


# -- tools -------------------------------------------------------------------------------------

def test_function_tools_are_declarations_with_a_json_schema() -> None:
    params = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    body, _ = gemini_body(user("hi"), tools=[function_tool("lookup", params)])
    assert body["tools"] == [{"functionDeclarations": [
        {"name": "lookup", "description": "lookup tool", "parametersJsonSchema": params}]}]


def test_strict_flag_is_reported_dropped() -> None:
    _, report = gemini_body(user("hi"), tools=[{**function_tool("lookup"), "strict": True}])
    assert "tools[0].strict" in report.dropped


def test_hosted_tool_is_reported_dropped() -> None:
    body, report = gemini_body(user("hi"), tools=[{"type": "image_generation"}])
    assert "tools" not in body
    assert "tools[0]" in report.dropped


def test_freeform_tool_is_one_required_string_with_the_grammar_described() -> None:
    apply_patch = {"type": "custom", "name": "apply_patch", "description": "Edit files.",
                   "format": {"type": "grammar", "syntax": "lark", "definition": APPLY_PATCH_GRAMMAR}}
    body, _ = gemini_body(user("hi"), tools=[apply_patch])
    declaration = body["tools"][0]["functionDeclarations"][0]
    schema = declaration["parametersJsonSchema"]
    assert schema["required"] == ["input"] and schema["properties"]["input"]["type"] == "string"
    assert "*** Begin Patch" in declaration["description"]


def test_namespaced_tool_name_is_flattened_and_maps_back() -> None:
    namespace = {"type": "namespace", "name": "mcp__db", "tools": [function_tool("query")]}
    t = translation(user("hi"), tools=[namespace])
    wire = t.body["tools"][0]["functionDeclarations"][0]["name"]
    assert wire == "mcp__db__query"
    assert (t.tools.lookup(wire).name, t.tools.lookup(wire).namespace) == ("query", "mcp__db")


def test_tool_name_not_starting_with_a_letter_gets_one() -> None:
    t = translation(user("hi"), tools=[function_tool("3d_render")])
    wire = t.body["tools"][0]["functionDeclarations"][0]["name"]
    assert wire[0].isalpha() or wire[0] == "_"
    assert t.tools.lookup(wire).name == "3d_render"


def test_long_tool_name_is_cut_to_64_the_same_way_every_turn() -> None:
    namespace = {"type": "namespace", "name": "mcp__" + "very_long_server_name_" * 3,
                 "tools": [function_tool("a_rather_long_tool_name_too")]}
    first = translation(user("hi"), tools=[namespace]).body["tools"][0]["functionDeclarations"][0]["name"]
    again = translation(user("hi"), user("more"), tools=[namespace]).body["tools"][0]["functionDeclarations"]
    assert len(first) <= 64
    assert again[0]["name"] == first


@pytest.mark.parametrize(("choice", "config"), [
    ("none", {"mode": "NONE"}),
    ("required", {"mode": "ANY"}),
    ({"type": "function", "name": "lookup"}, {"mode": "ANY", "allowedFunctionNames": ["lookup"]}),
])
def test_tool_choice_sets_the_function_calling_mode(choice: object, config: dict) -> None:
    body, _ = gemini_body(user("hi"), tools=[function_tool("lookup")], tool_choice=choice)
    assert body["toolConfig"] == {"functionCallingConfig": config}


def test_auto_tool_choice_is_gemini_default_and_not_sent() -> None:
    body, _ = gemini_body(user("hi"), tools=[function_tool("lookup")], tool_choice="auto")
    assert "toolConfig" not in body


def test_tool_choice_naming_an_undeclared_tool_is_reported() -> None:
    body, report = gemini_body(user("hi"), tools=[function_tool("lookup")],
                               tool_choice={"type": "function", "name": "missing"})
    assert "toolConfig" not in body
    assert "tool_choice" in report.dropped


def test_parallel_tool_calls_off_is_reported_dropped_and_lossy_with_tools() -> None:
    t = translation(user("hi"), tools=[function_tool("lookup")], parallel_tool_calls=False)
    assert "parallel_tool_calls" in t.dropped
    assert "parallel_tool_calls" not in t.cosmetic


def test_parallel_tool_calls_off_without_tools_is_a_cosmetic_drop() -> None:
    t = translation(user("hi"), parallel_tool_calls=False)
    assert "parallel_tool_calls" in t.cosmetic


# -- generation config -------------------------------------------------------------------------

def test_sampling_and_length_go_in_the_generation_config() -> None:
    body, _ = gemini_body(user("hi"), max_output_tokens=500, temperature=0.2, top_p=0.9)
    config = body["generationConfig"]
    assert (config["maxOutputTokens"], config["temperature"], config["topP"]) == (500, 0.2, 0.9)


def test_output_schema_asks_for_json_with_that_schema() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    body, _ = gemini_body(user("hi"), text={"format": {"type": "json_schema", "name": "o", "schema": schema}})
    assert body["generationConfig"]["responseMimeType"] == "application/json"
    assert body["generationConfig"]["responseJsonSchema"] == schema


def test_a_strict_schema_loses_nothing_since_gemini_constrains_its_answer_to_it() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"],
              "additionalProperties": False}
    fmt = {"type": "json_schema", "name": "o", "schema": schema, "strict": True}
    _, report = gemini_body(user("hi"), model="gemini-3-flash-preview", text={"format": fmt})
    assert report.dropped == []


def test_verbosity_is_reported_dropped() -> None:
    _, report = gemini_body(user("hi"), text={"verbosity": "low"})
    assert "text.verbosity" in report.dropped


def test_gemini_3_effort_becomes_a_thinking_level_with_thoughts_included() -> None:
    body, _ = gemini_body(user("hi"), model="gemini-3-flash-preview", reasoning={"effort": "low"})
    assert body["generationConfig"]["thinkingConfig"] == {"thinkingLevel": "LOW", "includeThoughts": True}


def test_effort_a_model_lacks_is_sent_as_its_nearest_level_with_a_note() -> None:
    body, report = gemini_body(user("hi"), model="gemini-3-pro-preview", reasoning={"effort": "medium"})
    assert body["generationConfig"]["thinkingConfig"]["thinkingLevel"] == "HIGH"
    assert any("'medium'" in n for n in report.notes)


def test_gemini_2_5_effort_becomes_a_thinking_budget() -> None:
    body, _ = gemini_body(user("hi"), model="gemini-2.5-flash", reasoning={"effort": "medium"})
    assert body["generationConfig"]["thinkingConfig"] == {"thinkingBudget": 8192, "includeThoughts": True}


def test_effort_none_turns_gemini_2_5_flash_thinking_off() -> None:
    body, _ = gemini_body(user("hi"), model="gemini-2.5-flash", reasoning={"effort": "none"})
    assert body["generationConfig"]["thinkingConfig"] == {"thinkingBudget": 0}


@pytest.mark.parametrize("model", ["gemini-3-flash-preview", "gemini-3-pro-preview", "gemini-2.5-pro"])
def test_effort_none_on_a_model_that_cannot_stop_thinking_is_reported_and_no_thoughts_come_back(
        model: str) -> None:
    body, report = gemini_body(user("hi"), model=model, reasoning={"effort": "none", "summary": "auto"})
    config = body["generationConfig"]["thinkingConfig"]
    assert "includeThoughts" not in config  # the client asked for no reasoning items
    assert {"reasoning.effort", "reasoning.summary"} <= set(report.dropped)
    assert any("cannot turn thinking off" in n for n in report.notes)


def test_summary_without_effort_only_asks_for_thoughts() -> None:
    body, _ = gemini_body(user("hi"), reasoning={"summary": "auto"})
    assert body["generationConfig"]["thinkingConfig"] == {"includeThoughts": True}


def test_effort_on_a_model_without_thinking_is_reported_dropped() -> None:
    body, report = gemini_body(user("hi"), model="gemini-2.0-flash", reasoning={"effort": "high"})
    assert "generationConfig" not in body
    assert "reasoning.effort" in report.dropped


# -- reasoning items ---------------------------------------------------------------------------

def test_openai_encrypted_reasoning_is_reported_dropped() -> None:
    reasoning = {"type": "reasoning", "summary": [], "encrypted_content": "gAAAAB-openai"}
    body, report = gemini_body(user("hi"), reasoning, assistant("hello"), user("more"))
    assert "input[1]" in report.dropped
    assert body["contents"][1] == {"role": "model", "parts": [{"text": "hello"}]}
