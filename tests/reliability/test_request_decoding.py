"""Generated Responses requests, valid and malformed, translated for every target.

What holds: `translate_request` returns a translation or raises `Refused` whose `to_body()` is a
Responses-shaped 400 error; never another exception. A translation can be sent: its body is
JSON, its tool names are unique and of the vendor's shape, every history call is answered in the
next turn and no result stands without its call. For the well-formed family every input is
accounted for: each non-hosted tool is declared upstream under a wire name that maps back to it
(or is reported dropped), each history call is upstream (or reported dropped), and each output
whose call is missing is reported dropped rather than sent.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.reliability import requests as gen
from tests.reliability import upstream_bodies as upstream
from tests.reliability.budget import REQUEST_FUZZ, fuzz
from tests.reliability.mutations import retyped
from translators import Refused, Translation, translate_request
from translators.dialect import BUILTIN, get

TARGETS = BUILTIN
"""The shipped dialects: each needs a reader of its upstream body in upstream_bodies.py
(`test_every_shipped_dialect_has_an_upstream_body_reader`)."""
_CALLS = {"function_call", "custom_tool_call"}
_OUTPUTS = {
    "function_call_output",
    "custom_tool_call_output",
    "local_shell_call_output",
    "tool_search_output",
}


def translate(body: Any, target: str, model: str | None) -> Translation | Refused:
    """The translation, or the Refused it raised; any other exception propagates."""
    try:
        return translate_request(body, target, model)
    except Refused as exc:
        return exc


def assert_responses_shaped_400(exc: Refused) -> None:
    assert exc.status == 400
    body = json.loads(json.dumps(exc.to_body()))
    assert set(body) == {"error"}
    error = body["error"]
    assert error["type"] == "invalid_request_error"
    assert isinstance(error["code"], str) and error["code"]
    assert isinstance(error["message"], str) and error["message"]
    assert error["param"] is None or isinstance(error["param"], str)


def assert_sendable(target: str, t: Translation) -> None:
    json.dumps(t.body, allow_nan=False, ensure_ascii=False).encode("utf-8")  # what the addon sends
    if target == "responses":
        return
    names = upstream.tool_names(target, t.body)
    assert len(names) == len(set(names)), f"duplicate tool names upstream: {names}"
    for name in names:
        assert upstream.name_pattern(target).match(name), f"tool name {name!r} is not a valid {target} name"
    pattern = upstream.name_pattern(target)
    for _, name in upstream.history_calls(target, t.body):
        assert pattern.match(name), f"history call name {name!r} is not a valid {target} name"
    chosen = upstream.chosen_tool(target, t.body)
    assert chosen is None or chosen in names, f"tool_choice names {chosen!r}, not a declared tool"
    upstream.check_pairing(target, t.body)


# -- accounting for the well-formed family --------------------------------------------------------


def _declared(body: dict[str, Any]) -> dict[tuple[str | None, str], str]:
    """(namespace, name) -> path of every well-formed non-hosted declaration (the last one wins)."""
    out: dict[tuple[str | None, str], str] = {}
    lists: list[tuple[str, Any]] = [("tools", body.get("tools") or [])]
    items = body.get("input") if isinstance(body.get("input"), list) else []
    for i, item in enumerate(items):
        if isinstance(item, dict) and item.get("type") in ("additional_tools", "tool_search_output"):
            lists.append((f"input[{i}].tools", item.get("tools") or []))

    def add(tool: dict[str, Any], path: str, namespace: str | None) -> None:
        kind = tool.get("type")
        if kind in ("function", "custom"):
            out[(namespace, tool["name"])] = path
        elif kind == "local_shell":
            out[(None, "local_shell")] = path
        elif kind == "tool_search" and tool.get("execution", "client") == "client":
            out[(None, "tool_search")] = path
        elif kind == "namespace":
            nested = None if tool["name"] == "functions" else tool["name"]
            for k, inner in enumerate(tool.get("tools") or []):
                add(inner, f"{path}.tools[{k}]", nested)
        else:
            out.pop((None, str(kind)), None)  # a hosted tool replaces a same-named one

    for prefix, tools in lists:
        for k, tool in enumerate(tools):
            add(tool, f"{prefix}[{k}]", None)
    return out


def _dropped(t: Translation, path: str) -> bool:
    return any(d == path or d.startswith(path + ".") or d.startswith(path + "[") for d in t.dropped)


def assert_accounted(body: dict[str, Any], target: str, t: Translation) -> None:
    if target == "responses":
        assert "client_metadata" not in t.body
        return
    names = set(upstream.tool_names(target, t.body))
    sent = {(ref.namespace, ref.name) for wire, ref in t.tools.by_wire.items() if wire in names}
    withheld = target == "bedrock" and any("not sent" in n for n in t.notes)  # Bedrock has no "none"
    for (namespace, name), path in _declared(body).items():
        if (namespace, name) not in sent and not withheld:
            assert _dropped(t, path), f"{path} ({namespace}, {name}) is neither sent nor reported dropped"
    items = body["input"] if isinstance(body["input"], list) else []
    calls = []
    for i, item in enumerate(items):
        kind = item.get("type") if isinstance(item, dict) else None
        if (
            (kind in _CALLS and item["call_id"] and item["name"] and not _dropped(t, f"input[{i}]"))
            or (kind == "local_shell_call" and not _dropped(t, f"input[{i}]"))
            or (
                kind == "tool_search_call"
                and item["execution"] == "client"
                and not _dropped(t, f"input[{i}]")
            )
        ):
            calls.append(item["call_id"])
    upstream_calls = upstream.history_calls(target, t.body)
    assert len(upstream_calls) == len(calls), f"history calls {calls} became {upstream_calls} upstream"
    for i, item in enumerate(items):
        if isinstance(item, dict) and item.get("type") in _OUTPUTS and item["call_id"] not in calls:
            assert _dropped(t, f"input[{i}]"), f"input[{i}] answers no call and was not reported dropped"


# -- the properties -------------------------------------------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
@fuzz(REQUEST_FUZZ)
@given(body=gen.codex_like(), data=st.data())
def test_codex_like_request_is_translated_with_every_input_accounted_for_or_refused(
    target: str, body: dict[str, Any], data: st.DataObject
) -> None:
    result = translate(body, target, data.draw(st.sampled_from(gen.MODELS[target]), label="model"))
    if isinstance(result, Refused):
        assert_responses_shaped_400(result)
        return
    assert_sendable(target, result)
    assert_accounted(body, target, result)


@pytest.mark.parametrize("target", TARGETS)
@fuzz(REQUEST_FUZZ)
@given(body=gen.requests(), data=st.data())
@example(body=[], data=None)
@example(body={"model": 5}, data=None)
@example(body={"model": "m", "input": {"type": "message"}}, data=None)
def test_any_request_is_a_sendable_translation_or_a_responses_shaped_400(
    target: str, body: Any, data: st.DataObject | None
) -> None:
    model = data.draw(st.sampled_from(gen.MODELS[target]), label="model") if data else gen.MODELS[target][0]
    result = translate(body, target, model)
    if isinstance(result, Refused):
        assert_responses_shaped_400(result)
    else:
        assert_sendable(target, result)


# -- edges the strategies reach rarely, pinned ------------------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
def test_huge_input_is_translated_whole(target: str) -> None:
    big = "x" * 5_000_000
    t = translate_request({"model": "gpt-5.5", "input": big, "stream": True}, target, gen.MODELS[target][0])
    assert big in json.dumps(t.body)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("depth", [200, 600])
def test_deeply_nested_arguments_and_schemas_translate_or_refuse(target: str, depth: int) -> None:
    body = {
        "model": "gpt-5.5",
        "tools": [{"type": "function", "name": "deep", "parameters": gen.deep_object(depth)}],
        "input": [
            {
                "type": "function_call",
                "call_id": "c1",
                "name": "deep",
                "arguments": gen.deep_arguments(depth),
            },
            {"type": "function_call_output", "call_id": "c1", "output": "ok"},
        ],
        "text": {"format": {"type": "json_schema", "name": "o", "schema": gen.deep_object(depth)}},
    }
    result = translate(body, target, gen.MODELS[target][0])
    if isinstance(result, Refused):
        assert_responses_shaped_400(result)
    else:
        assert_sendable(target, result)


@pytest.mark.parametrize("target", [t for t in TARGETS if t != "responses"])
def test_many_calls_with_one_call_id_reach_upstream_once_answered_once(target: str) -> None:
    call = {"type": "function_call", "call_id": "call_1", "name": "exec_command", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "call_1", "output": "done"}
    body = {"model": "gpt-5.5", "input": ["hi", call, output, call, output, call]}
    body["input"][0] = {"type": "message", "role": "user", "content": "hi"}
    t = translate_request(body, target, gen.MODELS[target][0])
    assert_sendable(target, t)
    assert Counter(c[0] for c in upstream.history_calls(target, t.body)).most_common(1)[0][1] == 1


@pytest.mark.parametrize("target", [t for t in TARGETS if t != "responses"])
@pytest.mark.parametrize(
    "ids",
    [("call.1", "call_1"), ("call 1", "call:1"), ("a" * 80 + "1", "a" * 80 + "2")],
    ids=["dot-underscore", "space-colon", "long-common-prefix"],
)
def test_call_ids_that_differ_only_in_punctuation_stay_distinct_upstream(
    target: str, ids: tuple[str, str]
) -> None:
    """Vendors restrict call id characters, so ids from another vendor are rewritten; two
    different ids must not become one (two tool_use blocks with one id, and results that can
    no longer be told apart, are a 400 upstream)."""
    items: list[dict[str, Any]] = [{"type": "message", "role": "user", "content": "go"}]
    for n, call_id in enumerate(ids):
        items += [
            {
                "type": "function_call",
                "call_id": call_id,
                "name": "exec_command",
                "arguments": f'{{"n":{n}}}',
            },
            {"type": "function_call_output", "call_id": call_id, "output": f"out {n}"},
        ]
    t = translate_request({"model": "gpt-5.5", "input": items}, target, gen.MODELS[target][0])
    calls = upstream.history_calls(target, t.body)
    assert len(calls) == 2
    assert calls[0][0] != calls[1][0] or (target == "gemini" and calls[0][0] is None)
    assert_sendable(target, t)


@pytest.mark.parametrize("target", [t for t in TARGETS if t != "responses"])
@pytest.mark.parametrize("kind", [{}, [], {"a": 1}], ids=["empty-object", "array", "object"])
def test_input_item_whose_type_is_not_a_string_is_a_responses_shaped_400(target: str, kind: Any) -> None:
    """Found by test_any_request_...: `{"type": {}}` made `kind in _REFUSED_ITEMS` raise TypeError
    (unhashable) out of translate_request."""
    body = {"model": "gpt-5.5", "input": [{"type": kind, "call_id": "c1", "output": "x"}]}
    result = translate(body, target, gen.MODELS[target][0])
    assert isinstance(result, Refused)
    assert_responses_shaped_400(result)


@pytest.mark.parametrize("target", [t for t in TARGETS if t != "responses"])
def test_tool_choice_naming_a_tool_only_seen_in_history_is_not_sent_as_a_forced_choice(target: str) -> None:
    """Found by test_codex_like_...: the tool is called in the history but not declared, so the
    upstream has no such tool to force (OpenAI, Anthropic, Gemini and Bedrock answer 400); the
    translators already drop a tool_choice whose tool is unknown, but a history call made it
    look known."""
    body = {
        "model": "gpt-5.5",
        "tool_choice": {"type": "function", "name": "exec_command"},
        "tools": [{"type": "function", "name": "read_file"}],
        "input": [
            {"type": "message", "role": "user", "content": "go"},
            {"type": "function_call", "call_id": "c1", "name": "exec_command", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "done"},
        ],
    }
    t = translate_request(body, target, gen.MODELS[target][0])
    assert upstream.chosen_tool(target, t.body) in (None, *upstream.tool_names(target, t.body))
    if upstream.chosen_tool(target, t.body) is None:
        assert "tool_choice" in t.dropped


# -- every field, every wrong type ------------------------------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
def test_every_field_retyped_is_translated_or_a_400_naming_a_path_never_a_500(target: str) -> None:
    """Each node of a request that has every field the decoder reads, replaced in turn by a value
    of each other JSON type: a 500 (or a foreign exception) makes Codex retry a request that can
    never succeed (docs/codex.md, Errors and retries)."""
    assert translate_request(gen.EVERY_FIELD, target, gen.MODELS[target][0])  # the base is valid
    failures: list[str] = []
    for path, body in retyped(gen.EVERY_FIELD):
        try:
            result = translate(body, target, gen.MODELS[target][0])
        except Exception as exc:
            failures.append(f"{path}: {exc!r}")
            continue
        if isinstance(result, Refused):
            if result.status != 400 or not result.param:
                failures.append(f"{path}: {result.status} {result.code} param={result.param!r}")
        else:
            assert_sendable(target, result)
    assert not failures, f"{len(failures)} retyped fields escaped:\n" + "\n".join(failures[:60])


def test_every_shipped_dialect_has_an_upstream_body_reader() -> None:
    translated = {name for name in BUILTIN if get(name).passthrough is None}
    for name in translated:
        upstream.reader(name)  # fails naming the dialect that declares none
