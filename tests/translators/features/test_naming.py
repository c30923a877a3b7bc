"""translators/features/naming.py: flat wire names for namespaced tools, cut to 64 with a stable
hash, and back."""

from __future__ import annotations

from translators.core.translation import Translation
from translators.features.naming import (
    DEFAULT_POLICY,
    NamePolicy,
    ToolIndex,
    ToolRef,
    assign_wire_names,
    fnv1a_32,
    join_namespace,
)


def reference_fnv1a(text: str) -> str:
    """FNV-1a 32-bit as specified (offset basis 2166136261, prime 16777619), written out here so the
    expected suffix does not come from the code under test."""
    h = 2166136261
    for byte in text.encode():
        h ^= byte
        h = (h * 16777619) % 2**32
    return format(h, "08x")


def test_fnv1a_matches_the_published_test_vectors():
    assert fnv1a_32("") == "811c9dc5"
    assert fnv1a_32("a") == "e40c292c"
    assert fnv1a_32("foobar") == "bf9cf968"


def test_tools_in_the_functions_namespace_keep_their_plain_names():
    assert join_namespace("functions", "exec_command") == "exec_command"
    assert join_namespace(None, "exec_command") == "exec_command"


def test_mcp_namespace_and_underscore_tool_join_the_way_codex_does():
    assert (
        join_namespace("mcp__codex_apps__calendar", "_create_event")
        == "mcp__codex_apps__calendar_create_event"
    )


def test_other_namespaces_join_with_a_double_underscore():
    assert join_namespace("clock", "sleep") == "clock__sleep"


def test_a_name_over_64_characters_is_cut_with_the_fnv1a_hash_of_the_full_name():
    namespace, name = "mcp__a_very_long_server_name_for_testing", "and_an_equally_long_tool_name_too"
    full = f"{namespace}__{name}"
    assert len(full) > 64
    wire = assign_wire_names([(namespace, name)])[(namespace, name)]
    assert wire == full[:55] + "_" + reference_fnv1a(full)
    assert len(wire) == 64


def test_the_cut_name_is_the_same_on_every_turn():
    key = ("n" * 40, "t" * 40)
    assert assign_wire_names([key])[key] == assign_wire_names([("x", "y"), key])[key]


def test_two_long_names_with_the_same_head_stay_distinct():
    a, b = (None, "x" * 70 + "a"), (None, "x" * 70 + "b")
    names = assign_wire_names([a, b])
    assert names[a] != names[b]
    assert all(len(n) <= 64 for n in names.values())


def test_characters_the_upstreams_reject_become_underscores():
    assert DEFAULT_POLICY.wire_name("clock.sleep now") == "clock_sleep_now"


def test_a_policy_that_needs_a_leading_letter_prefixes_an_underscore():
    assert NamePolicy(must_start_with_letter=True).wire_name("3d_render") == "_3d_render"


def test_two_tools_that_flatten_to_the_same_name_get_distinct_wire_names():
    nested, flat = ("clock", "sleep"), (None, "clock__sleep")
    names = assign_wire_names([nested, flat])
    assert names[nested] == "clock__sleep"
    assert names[flat] != "clock__sleep"
    assert len(names[flat]) <= 64


def test_the_index_maps_a_wire_name_back_to_namespace_and_name():
    index = ToolIndex()
    index.add("clock__sleep", ToolRef(name="sleep", namespace="clock"))
    assert index.lookup("clock__sleep") == ToolRef(name="sleep", namespace="clock")


def test_an_unknown_wire_name_comes_back_as_a_plain_function_without_a_namespace():
    assert ToolIndex().lookup("mystery__tool") == ToolRef(
        name="mystery__tool", namespace=None, kind="function"
    )


def test_the_index_survives_the_flow_metadata_round_trip_of_a_translation():
    # the addon keeps `translation.model_dump(mode="json")` in the flow and rebuilds the
    # Translation from it for loaded and replayed flows (addon/serve/flow.py `_restored`)
    index = ToolIndex()
    index.add("clock__sleep", ToolRef(name="sleep", namespace="clock"))
    index.add("apply_patch", ToolRef(name="apply_patch", kind="custom", syntax="lark", definition="start: x"))
    saved = Translation(target="anthropic", model="m", client_model="c", path="/v1/messages", body={},
                        tools=index).model_dump(mode="json")
    assert saved["tools"] == {"by_wire": {
        "clock__sleep": {"name": "sleep", "namespace": "clock", "kind": "function", "syntax": None,
                         "definition": None, "plaintext": False},
        "apply_patch": {"name": "apply_patch", "namespace": None, "kind": "custom", "syntax": "lark",
                        "definition": "start: x", "plaintext": False}}}
    assert Translation.model_validate(saved).tools == index
    # a flow saved before `plaintext` existed loads with its default
    for ref in saved["tools"]["by_wire"].values():
        del ref["plaintext"]
    assert Translation.model_validate(saved).tools == index
