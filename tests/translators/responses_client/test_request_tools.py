"""Responses request decoding, tool declarations: top-level `tools`, Lite `additional_tools`, and the
tools a `tool_search_output` makes callable (issue 2, Build 3, first bullets)."""

from __future__ import annotations

from tests.translators.bodies import (
    APPLY_PATCH_GRAMMAR,
    additional_tools,
    body,
    custom,
    decoded,
    function,
    namespace,
    tool_search,
    tool_search_call,
    tool_search_output,
    user,
)
from translators.ir.request import (
    CustomTool,
    FunctionTool,
    HostedTool,
    LocalShellTool,
    Namespace,
    Text,
    ToolResult,
    ToolSearchTool,
)

CATALOG = [
    namespace(
        "functions",
        function("exec_command", "Run a command."),
        custom("apply_patch", "Edit files.", APPLY_PATCH_GRAMMAR),
    ),
    namespace("clock", function("sleep", "Sleep."), description="Time tools."),
    tool_search(),
]


def signature(tools) -> list[tuple]:
    """What a tool is, without where it was declared."""
    return [
        (
            type(t).__name__,
            t.namespace,
            t.name,
            getattr(t, "description", None),
            getattr(t, "definition", None),
        )
        for t in tools
    ]


def names(tools) -> list[tuple[str | None, str]]:
    return [(t.namespace, t.name) for t in tools]


def test_additional_tools_decode_exactly_like_top_level_tools():
    top, _ = decoded(body(user("hi"), tools=CATALOG))
    lite, _ = decoded(body(additional_tools(*CATALOG), user("hi")))
    assert signature(lite.tools) == signature(top.tools)
    assert lite.namespaces == top.namespaces


def test_the_functions_namespace_adds_no_namespace_to_its_tools():
    request, _ = decoded(body(additional_tools(*CATALOG)))
    assert names(request.tools)[:2] == [(None, "exec_command"), (None, "apply_patch")]


def test_tools_in_another_namespace_keep_it():
    request, _ = decoded(body(additional_tools(*CATALOG)))
    assert (
        FunctionTool(
            name="sleep",
            namespace="clock",
            description="Sleep.",
            strict=False,
            parameters={"type": "object", "properties": {}, "additionalProperties": False},
            origin="input[0].tools[1].tools[0]",
        )
        in request.tools
    )


def test_a_custom_tool_keeps_its_grammar():
    request, _ = decoded(body(tools=[custom("apply_patch", "Edit files.", APPLY_PATCH_GRAMMAR)]))
    assert request.tools == [
        CustomTool(
            name="apply_patch",
            description="Edit files.",
            syntax="lark",
            definition=APPLY_PATCH_GRAMMAR,
            origin="tools[0]",
        )
    ]


def test_a_custom_tool_with_a_regex_grammar_keeps_the_regex():
    request, _ = decoded(body(tools=[custom("digits", definition=r"\d+", syntax="regex")]))
    assert (request.tools[0].syntax, request.tools[0].definition) == ("regex", r"\d+")


def test_client_tool_search_is_a_tool_search_tool():
    request, report = decoded(body(tools=[tool_search("Find tools.")]))
    assert isinstance(request.tools[0], ToolSearchTool)
    assert request.tools[0].description == "Find tools."
    assert request.tools[0].parameters["required"] == ["query"]
    assert report.dropped == []


def test_local_shell_is_a_local_shell_tool():
    request, _ = decoded(body(tools=[{"type": "local_shell"}]))
    assert isinstance(request.tools[0], LocalShellTool)


def test_hosted_image_generation_is_kept_as_a_hosted_tool_for_the_encoder_to_judge():
    request, _ = decoded(body(tools=[{"type": "image_generation", "quality": "low"}]))
    assert request.tools == [
        HostedTool(name="image_generation", raw={"type": "image_generation", "quality": "low"},
                   origin="tools[0]")
    ]


def test_top_level_tools_come_first_then_additional_tools_and_tool_search_outputs_in_input_order():
    request, _ = decoded(
        body(
            additional_tools(function("second")),
            tool_search_call("ts1", "x"),
            tool_search_output("ts1", namespace("mcp__srv", function("third"), description="A server.")),
            additional_tools(function("fourth")),
            tools=[function("first")],
        )
    )
    assert names(request.tools) == [
        (None, "first"),
        (None, "second"),
        ("mcp__srv", "third"),
        (None, "fourth"),
    ]


def test_a_later_declaration_of_the_same_name_replaces_the_earlier_one_in_place():
    request, _ = decoded(
        body(
            additional_tools(function("b", "new b"), function("d")),
            tools=[function("a"), function("b", "old b"), function("c")],
        )
    )
    assert names(request.tools) == [(None, "a"), (None, "b"), (None, "c"), (None, "d")]
    assert request.tools[1].description == "new b"


def test_the_same_name_in_two_namespaces_is_two_tools():
    request, _ = decoded(body(tools=[function("sleep"), namespace("clock", function("sleep"))]))
    assert names(request.tools) == [(None, "sleep"), ("clock", "sleep")]


def test_namespace_descriptions_are_kept_but_codex_filler_is_not():
    request, _ = decoded(
        body(
            tools=[
                namespace("clock", function("sleep"), description="Tools in the clock namespace."),
                namespace(
                    "multi_agent_v1", function("spawn_agent"), description="Tools for spawning sub-agents."
                ),
                namespace("empty", function("noop"), description=""),
            ]
        )
    )
    assert request.namespaces == [
        Namespace(name="multi_agent_v1", description="Tools for spawning sub-agents.")
    ]


def test_defer_loading_is_consumed_silently():
    request, report = decoded(body(tools=[function("spawn_agent", defer_loading=True)]))
    assert request.tools[0].name == "spawn_agent"
    assert report.dropped == []


def test_an_unknown_tool_field_is_reported():
    _, report = decoded(body(tools=[function("f", cache_hint="x")]))
    assert report.dropped == ["tools[0].cache_hint"]


def test_unknown_fields_of_every_tool_kind_are_reported_in_request_order():
    extra = {f"x{i}": 1 for i in range(9, 0, -1)}
    declarations = [{**function("f"), **extra}, {**custom("c"), **extra}, {**tool_search(), **extra},
                    {**namespace("clock", function("sleep")), **extra}]
    _, report = decoded(body(tools=declarations, reasoning={"effort": "low", **extra}, text=extra))
    expected = [f"{path}.{key}" for path in ("tools[0]", "tools[1]", "tools[2]", "tools[3]") for key in extra]
    expected += [f"{path}.{key}" for path in ("reasoning", "text") for key in extra]
    assert report.dropped == expected


def test_tools_listed_in_a_tool_search_output_become_callable_and_the_result_names_them():
    request, _ = decoded(
        body(
            user("spawn a helper"),
            tool_search_call("ts1", "agent"),
            tool_search_output("ts1", namespace(
                "multi_agent_v1", function("spawn_agent", "Spawn a sub-agent.", defer_loading=True),
                description="Sub-agents.")),
            tools=[tool_search()],
        )
    )
    assert ("multi_agent_v1", "spawn_agent") in names(request.tools)
    result = next(i for i in request.items if isinstance(i, ToolResult))
    assert result.call_id == "ts1"
    assert "multi_agent_v1.spawn_agent: Spawn a sub-agent." in result.parts[0].text


def test_a_tool_search_output_that_lists_known_tools_again_still_names_them():
    # Regression: the listing only named tools that were new to the request, so a second search
    # that found the same namespace told the model "No tools matched this search."
    found = namespace(
        "multi_agent_v1", function("spawn_agent", "Spawn a sub-agent."), description="Sub-agents."
    )
    request, _ = decoded(
        body(
            tool_search_call("ts1", "agent"),
            tool_search_output("ts1", found),
            tool_search_call("ts2", "spawn"),
            tool_search_output("ts2", found),
            tools=[tool_search()],
        )
    )
    results = [i for i in request.items if isinstance(i, ToolResult)]
    assert [r.call_id for r in results] == ["ts1", "ts2"]
    assert all("multi_agent_v1.spawn_agent" in r.parts[0].text for r in results)
    assert names(request.tools).count(("multi_agent_v1", "spawn_agent")) == 1


def test_a_tool_search_output_with_no_tools_says_so():
    request, _ = decoded(
        body(
            tool_search_call("ts1", "x"),
            tool_search_output("ts1"),
            tools=[tool_search()],
        )
    )
    result = next(i for i in request.items if isinstance(i, ToolResult))
    assert result.parts == [Text(text="No tools matched this search.")]


def test_a_function_named_like_a_hosted_tool_is_not_replaced_by_it():
    request, _ = decoded(body(tools=[function("web_search", "Search my notes."), {"type": "web_search"}]))
    kinds = [(type(t).__name__, t.name) for t in request.tools]
    assert kinds == [("FunctionTool", "web_search"), ("WebSearchTool", "web_search")]
