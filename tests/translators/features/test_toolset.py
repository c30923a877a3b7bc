"""translators/features/toolset.py: the JSON-function tool list every non-OpenAI target shares."""

from __future__ import annotations

import json

from tests.translators.bodies import (
    APPLY_PATCH_GRAMMAR,
    PATCH,
    body,
    custom,
    custom_call,
    custom_output,
    decoded,
    function,
    namespace,
    tool_search,
    user,
)
from translators.core.report import Report
from translators.features import freeform, toolset
from translators.features.naming import DEFAULT_POLICY, ToolRef
from translators.ir.request import FunctionTool, Image, Namespace, Request, Text, ToolCall, ToolResult


def build(request_body):
    request, _ = decoded(request_body)
    report = Report()
    return toolset.build(request, DEFAULT_POLICY, report), report


def test_hosted_tools_are_reported_and_left_out():
    tools, report = build(body(tools=[function("f"), {"type": "file_search"}, {"type": "image_generation"}]))
    assert [t.wire for t in tools.tools] == ["f"]
    assert report.dropped == ["tools[1]", "tools[2]"]


def test_the_web_search_tool_is_no_function_and_left_to_each_dialect():
    tools, report = build(body(tools=[function("f"), {"type": "web_search"}]))
    assert [t.wire for t in tools.tools] == ["f"]
    assert report.dropped == []


def test_a_freeform_tool_gets_the_one_string_schema_and_maps_back_as_custom():
    tools, _ = build(body(tools=[custom("apply_patch", "Edit.", APPLY_PATCH_GRAMMAR)]))
    (tool,) = tools.tools
    assert tool.parameters == freeform.schema()
    assert tools.index.lookup("apply_patch") == ToolRef(
        name="apply_patch", kind="custom", syntax="lark", definition=APPLY_PATCH_GRAMMAR
    )


def test_tool_search_maps_back_as_tool_search():
    tools, _ = build(body(tools=[tool_search()]))
    assert tools.index.lookup("tool_search").kind == "tool_search"


def test_a_call_in_history_to_a_tool_no_longer_declared_still_maps_back_with_its_kind():
    tools, _ = build(body(user("q"), custom_call("p", "apply_patch", PATCH), custom_output("p", "ok")))
    assert tools.tools == []
    assert tools.index.lookup("apply_patch").kind == "custom"


def test_wire_looks_up_by_namespace_and_name_with_functions_as_no_namespace():
    tools, _ = build(body(tools=[function("exec_command"), namespace("clock", function("sleep"))]))
    assert tools.wire("functions", "exec_command") == tools.wire(None, "exec_command") == "exec_command"
    assert tools.wire("clock", "sleep") == "clock__sleep"


def test_call_input_parses_json_arguments_and_wraps_custom_text():
    report = Report()
    function_call = ToolCall(kind="function", call_id="c", name="f", arguments='{"a": [1]}')
    custom_call_ = ToolCall(kind="custom", call_id="c", name="apply_patch", arguments=PATCH)
    assert toolset.call_input(function_call, report) == {"a": [1]}
    assert toolset.call_input(custom_call_, report) == {"input": PATCH}
    assert toolset.call_input(ToolCall(kind="function", call_id="c", name="f", arguments=""), report) == {}
    assert report.notes == []


def test_call_input_wraps_arguments_that_are_not_an_object_and_notes_it():
    report = Report()
    call = ToolCall(kind="function", call_id="c", name="f", arguments="[1, 2]", origin="input[4]")
    assert toolset.call_input(call, report) == {"arguments": [1, 2]}
    assert "input[4]" in report.notes[0]


def test_the_namespace_preamble_lists_each_namespace_with_its_description():
    preamble = toolset.namespace_preamble([Namespace(name="clock", description="Time tools. ")])
    assert "`clock`: Time tools." in preamble
    assert toolset.namespace_preamble([]) is None


def test_the_tool_description_of_a_freeform_tool_is_json_safe():
    tools, _ = build(body(tools=[custom("apply_patch", "Edit.", APPLY_PATCH_GRAMMAR)]))
    assert json.loads(json.dumps(tools.tools[0].description)) == tools.tools[0].description


# -- input examples and failed results ----------------------------------------------------------

def _examples_request():
    tool = FunctionTool(name="Read", input_examples=[{"path": "a"}], origin="tools[0]")
    return Request(model="m", tools=[tool])


def test_input_examples_are_kept_for_a_dialect_that_takes_them():
    report = Report()
    tools = toolset.build(_examples_request(), DEFAULT_POLICY, report, examples=True)
    assert tools.tools[0].input_examples == ({"path": "a"},)
    assert not report


def test_input_examples_are_reported_once_for_any_other_dialect():
    report = Report()
    tools = toolset.build(_examples_request(), DEFAULT_POLICY, report)
    assert tools.tools[0].input_examples == ()
    assert report.lossy == ["tools[0].input_examples"]


def test_a_failed_results_text_opens_with_the_error_mark():
    report = Report()
    failed = ToolResult(kind="function", call_id="c", parts=[Text(text="exit 1"), Text(text="more")],
                        is_error=True)
    assert [p.text for p in toolset.result_parts(failed, report)] == ["Error: exit 1", "more"]
    assert report.notes == [toolset.ERROR_NOTE]
    image_first = ToolResult(kind="function", call_id="c", parts=[Image(url="data:image/png;base64,AA")],
                             is_error=True)
    assert [p.type for p in toolset.result_parts(image_first, report)] == ["text", "image"]
    assert toolset.result_parts(image_first, report)[0].text == "Error:"
    fine = ToolResult(kind="function", call_id="c", parts=[Text(text="ok")])
    quiet = Report()
    assert toolset.result_parts(fine, quiet) == fine.parts and not quiet
