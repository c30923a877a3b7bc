"""Codex requests to translate: a real capture (small) and a long synthesized session.

The long session is built deterministically from the shapes in the real captures
(tests/data/codex, docs/codex.md "Request", "Input items"): the real system prompt, skills and
environment messages, the real tool declarations (plus the code-mode freeform `exec` tool and
MCP-style namespaces whose parameter schemas are taken from the real functions), then turns of
reasoning, commentary, exec_command / apply_patch / namespaced calls with their outputs, two
tool_search rounds that load deferred namespaces, and final answers.
"""

from __future__ import annotations

import json
import random
from functools import cache
from pathlib import Path
from typing import Any

from translators.features.vendor_state import encode as encode_state
from translators.ir.request import VendorState

REPO = Path(__file__).resolve().parent.parent
CODEX_DIR = REPO / "tests" / "data" / "codex"
SMALL_CAPTURE = "request_classic_gpt55.json"

TARGET_MODELS = {
    "anthropic": "claude-sonnet-4-6",
    "chat": "deepseek-chat",
    "gemini": "gemini-2.5-pro",
    "bedrock": "us.anthropic.claude-sonnet-4-6",
}
"""Upstream model per target dialect (what `--set gateway_model=` would name)."""

LONG_TURNS = 18
"""Turns in the long session: 18 give 208 input items."""

Json = dict[str, Any]

_GITHUB = ("create_issue", "list_issues", "get_issue", "add_issue_comment", "list_pull_requests",
           "get_pull_request", "create_pull_request", "merge_pull_request", "list_commits",
           "get_file_contents", "search_code", "create_branch")
_FILESYSTEM = ("read_file", "write_file", "list_directory", "move_file", "search_files", "get_file_info",
               "create_directory", "read_multiple_files")
_BROWSER = ("navigate", "screenshot", "click", "fill")
_EXEC_GRAMMAR = ("\nstart: pragma_source | plain_source\npragma_source: PRAGMA_LINE NEWLINE SOURCE\n"
                 "plain_source: SOURCE\n\nPRAGMA_LINE: /[ \\t]*\\/\\/ @exec:[^\\r\\n]*/\n"
                 "NEWLINE: /\\r?\\n/\nSOURCE: /[\\s\\S]+/\n")
"""Codex's code-mode `exec` grammar (docs/codex.md "Code-mode exec")."""
_WORDS = ("the", "module", "returns", "a", "config", "value", "when", "parser", "handles", "stream",
          "request", "error", "test", "fixture", "so", "we", "update", "function", "call", "output",
          "field", "name", "check", "before", "after", "list", "item", "index", "cache", "path")


def capture(name: str) -> bytes:
    return (CODEX_DIR / name).read_bytes()


def small_request() -> bytes:
    """A real Codex 0.169 request (gpt-5.5 classic mode: 4 messages, 10 tools), byte for byte."""
    return capture(SMALL_CAPTURE)


@cache
def long_request(turns: int = LONG_TURNS) -> bytes:
    """A long Codex session: 200+ input items, 40 tools (namespaces, freeform tools, tool_search)."""
    base = json.loads(capture(SMALL_CAPTURE))
    unknown = json.loads(capture("request_unknown_model.json"))
    rng = random.Random(8)
    pool = _property_pool(base["tools"])
    tools = list(base["tools"])
    tools.insert(4, {"type": "custom", "name": "exec", "description": _prose(rng, 60),
                     "format": {"type": "grammar", "syntax": "lark", "definition": _EXEC_GRAMMAR}})
    tools[-2:-2] = [_namespace("mcp__github", _GITHUB, pool, rng),
                    _namespace("mcp__filesystem", _FILESYSTEM, pool, rng)]
    agents = next(t for t in unknown["tools"] if t["type"] == "namespace")
    deferred = [_deferred(agents), _deferred(_namespace("mcp__browser", _BROWSER, pool, rng))]
    items: list[Json] = list(base["input"][:3])  # the real developer prompt, skills, environment
    for t in range(turns):
        items += _turn(t, rng, deferred)
    items.append(_message("user", "input_text", "continue", f"msg_{turns}_u"))
    body = {**base, "input": items, "tools": tools}
    return json.dumps(body, ensure_ascii=False).encode()


def describe(raw: bytes) -> dict[str, int]:
    """Size, input items and leaf tools (namespace members and tool_search results counted)."""
    body = json.loads(raw)
    leaves = _leaf_tools(body.get("tools") or [])
    for item in body.get("input") or []:
        if item.get("type") in ("additional_tools", "tool_search_output"):
            leaves += _leaf_tools(item.get("tools") or [])
    return {"bytes": len(raw), "items": len(body.get("input") or []), "tools": leaves}


def _leaf_tools(tools: list[Json]) -> int:
    return sum(_leaf_tools(t.get("tools") or []) if t.get("type") == "namespace" else 1 for t in tools)


# -- tools ----------------------------------------------------------------------------------------

def _property_pool(tools: list[Json]) -> list[tuple[str, Json]]:
    pool: dict[str, Json] = {}
    for tool in tools:
        if tool.get("type") == "function":
            pool.update(tool["parameters"].get("properties") or {})
    return sorted(pool.items())


def _namespace(name: str, functions: tuple[str, ...], pool: list[tuple[str, Json]],
               rng: random.Random) -> Json:
    members = []
    for i, fn in enumerate(functions):
        props = dict(pool[(i * 3 + j) % len(pool)] for j in range(1 + i % 4))
        members.append({"type": "function", "name": fn, "description": _prose(rng, 25 + 5 * (i % 5)),
                        "strict": False,
                        "parameters": {"type": "object", "properties": props, "required": [next(iter(props))],
                                       "additionalProperties": False}})
    return {"type": "namespace", "name": name, "description": _prose(rng, 12), "tools": members}


def _deferred(namespace: Json) -> Json:
    return {**namespace, "tools": [{**t, "defer_loading": True} for t in namespace["tools"]]}


# -- items ----------------------------------------------------------------------------------------

def _turn(t: int, rng: random.Random, deferred: list[Json]) -> list[Json]:
    items = [_message("user", "input_text", f"Task {t + 1}: {_prose(rng, 30)}", f"msg_{t}_u"),
             _reasoning(t, 0, rng),
             {**_message("assistant", "output_text", _prose(rng, 25), f"msg_{t}_c"), "phase": "commentary"}]
    calls = [_exec_call(t, 1, rng)]
    if t % 5 == 2:  # parallel tool calls: both calls first, then both outputs
        calls.append(_exec_call(t, 2, rng))
    if t % 3 == 1:
        calls.append(_ns_call(t, 3, "mcp__github", _GITHUB[t % len(_GITHUB)], rng))
    if t > 2 and t % 4 == 3:
        calls.append(_ns_call(t, 4, "multi_agent_v1", "wait_agent", rng))
    if t > 9 and t % 2 == 0:
        calls.append(_ns_call(t, 5, "mcp__browser", _BROWSER[t % len(_BROWSER)], rng))
    items += [c for c, _ in calls] + [o for _, o in calls]
    if t in (2, 9):
        items += _tool_search(t, deferred[0 if t == 2 else 1], rng)
    items.append(_reasoning(t, 1, rng))
    items += _patch_call(t, rng)
    if t % 4 == 0:
        items += _js_call(t, rng)
    final = _message("assistant", "output_text", _prose(rng, 60), f"msg_{t}_f")
    items.append({**final, "phase": "final_answer"})
    return items


def _message(role: str, kind: str, text: str, item_id: str) -> Json:
    part: Json = {"type": kind, "text": text}
    out: Json = {"type": "message", "id": item_id, "role": role, "content": [part]}
    if role == "assistant":
        part["annotations"] = []
        out["status"] = "completed"
    return out


def _reasoning(t: int, k: int, rng: random.Random) -> Json:
    thinking = _prose(rng, 90)
    signature = "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
                        for _ in range(344))
    return {"type": "reasoning", "id": f"rs_{t}_{k}",
            "summary": [{"type": "summary_text", "text": f"**{_prose(rng, 3).title()}** {_prose(rng, 20)}"}],
            "content": None,
            "encrypted_content": encode_state(VendorState(dialect="anthropic", signature=signature,
                                                          text=thinking))}


def _uid(prefix: str, t: int, k: int) -> str:
    return f"{prefix}_01a228cd-{t:04x}-7{k:03x}-8114-d6e10150a260"


def _exec_call(t: int, k: int, rng: random.Random) -> tuple[Json, Json]:
    call_id = f"call_{t}_{k}"
    cmd = rng.choice(("rg -n 'def ' src", "pytest -q tests/test_parser.py", "git diff --stat", "ls -la src",
                      "sed -n 1,120p src/parser.py", "python -m mypy src"))
    args = {"cmd": cmd, "workdir": "/home/user/project", "yield_time_ms": 10000, "max_output_tokens": 4000}
    lines = "\n".join(f"src/module_{rng.randrange(40)}.py:{rng.randrange(900)}: {_prose(rng, 9)}"
                      for _ in range(14 + t % 9))
    output = (f"Chunk ID: {rng.randrange(16 ** 6):06x}\nWall time: 0.{rng.randrange(9999):04d} seconds\n"
              f"Process exited with code 0\nOriginal token count: {rng.randrange(100, 900)}\n"
              f"Output:\n{lines}\n")
    return ({"type": "function_call", "id": f"fc_{t}_{k}", "status": "completed", "name": "exec_command",
             "arguments": json.dumps(args), "call_id": call_id},
            {"type": "function_call_output", "id": _uid("fco", t, k), "call_id": call_id, "output": output})


def _ns_call(t: int, k: int, namespace: str, name: str, rng: random.Random) -> tuple[Json, Json]:
    call_id = f"call_{t}_{k}"
    args = {"query": _prose(rng, 4), "limit": 5}
    result = [{"id": rng.randrange(10 ** 6), "title": _prose(rng, 6), "state": "open"} for _ in range(5)]
    return ({"type": "function_call", "id": f"fc_{t}_{k}", "status": "completed", "name": name,
             "namespace": namespace, "arguments": json.dumps(args), "call_id": call_id},
            {"type": "function_call_output", "id": _uid("fco", t, k), "call_id": call_id,
             "output": json.dumps(result)})


def _tool_search(t: int, namespace: Json, rng: random.Random) -> list[Json]:
    call_id = f"call_{t}_ts"
    return [{"type": "tool_search_call", "id": f"tsc_{t}", "call_id": call_id, "status": "completed",
             "execution": "client", "arguments": {"query": _prose(rng, 3), "limit": 8}},
            {"type": "tool_search_output", "id": _uid("tso", t, 0), "call_id": call_id, "status": "completed",
             "execution": "client", "tools": [namespace]}]


def _patch_call(t: int, rng: random.Random) -> list[Json]:
    call_id = f"call_{t}_p"
    path = f"src/module_{t}.py"
    body = "\n".join(f"{'+' if i % 3 else '-'}    {_prose(rng, 8)}" for i in range(12))
    patch = f"*** Begin Patch\n*** Update File: {path}\n@@ def handler(request):\n{body}\n*** End Patch\n"
    output = (f"Exit code: 0\nWall time: 0.1 seconds\nOutput:\n"
              f"Success. Updated the following files:\nM {path}\n")
    return [{"type": "custom_tool_call", "id": f"ctc_{t}", "status": "completed", "call_id": call_id,
             "name": "apply_patch", "input": patch},
            {"type": "custom_tool_call_output", "id": _uid("ctco", t, 0), "call_id": call_id,
             "output": output}]


def _js_call(t: int, rng: random.Random) -> list[Json]:
    call_id = f"call_{t}_js"
    code = f'const r = await tools.exec_command({{cmd: "rg -n {_prose(rng, 1)} src"}});\ntext(r);\n'
    output = [{"type": "input_text", "text": _prose(rng, 40)},
              {"type": "input_text", "text": _prose(rng, 20)}]
    return [{"type": "custom_tool_call", "id": f"ctc_{t}_js", "status": "completed", "call_id": call_id,
             "name": "exec", "input": code},
            {"type": "custom_tool_call_output", "id": _uid("ctco", t, 1), "call_id": call_id,
             "output": output}]


def _prose(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words))


# -- Responses Lite sessions ----------------------------------------------------------------------

LITE_CAPTURE = "request_lite_functions_namespace.json"
LITE_ITEMS = 188
"""Input items of the held-out kind of session (issue 39): a long Responses Lite conversation."""


def lite_requests(max_items: int) -> list[bytes]:
    """Every request a Codex Lite session sends until its input holds `max_items` items, in order.

    Built on the real Lite request (docs/codex.md "Responses Lite": the `additional_tools` item with
    the `functions` namespace and `tool_search`, the developer prompt, skills, environment, then
    the user's first message), grown the way Codex grows it: each request repeats the last one's
    input and adds what happened since, the model's output items as the gateway streamed them (a
    reasoning item carrying the Anthropic thinking signature, commentary, calls to the
    `functions` tools, which carry no namespace, and to a namespace loaded by `tool_search`) and
    Codex's outputs of the calls it ran; a turn ends with the final answer, and the next one
    starts with the user's message."""
    base = json.loads(capture(LITE_CAPTURE))
    rng = random.Random(39)
    browser = _deferred(_namespace("mcp__browser", _BROWSER, _property_pool(_lite_functions(base)), rng))
    items: list[Json] = list(base["input"])
    out = [_with_input(base, items)]
    t = 0
    while len(items) < max_items:
        for step in _lite_turn(t, rng, browser):
            items = items + step
            out.append(_with_input(base, items))
            if len(items) >= max_items:
                break
        t += 1
    return out


def lite_session(items: int = LITE_ITEMS) -> bytes:
    """The request of a Lite session (`lite_requests`) whose input holds exactly `items` items."""
    found = _lite_by_size(items).get(items)
    if found is None:
        raise ValueError(f"no request of the Lite session has exactly {items} input items")
    return found


def lite_before(items: int = LITE_ITEMS) -> bytes:
    """The request the Lite session sent before `lite_session(items)`."""
    sizes = list(_lite_by_size(items))
    if items not in sizes or sizes.index(items) == 0:
        raise ValueError(f"no request of the Lite session has exactly {items} input items, after another")
    return _lite_by_size(items)[sizes[sizes.index(items) - 1]]


@cache
def _lite_by_size(items: int) -> dict[int, bytes]:
    return {len(json.loads(raw)["input"]): raw for raw in lite_requests(items)}


def _with_input(base: Json, items: list[Json]) -> bytes:
    return json.dumps({**base, "input": items}, ensure_ascii=False).encode()


def _lite_functions(base: Json) -> list[Json]:
    return [t for ns in base["input"][0]["tools"] if ns.get("type") == "namespace" for t in ns["tools"]]


def _lite_turn(t: int, rng: random.Random, browser: Json) -> list[list[Json]]:
    """The items each request of turn `t` adds: the last turn's final answer and the user's new
    message (the first turn's is the capture's), then each batch of calls with their outputs."""
    steps: list[list[Json]] = [] if t == 0 else [[
        {**_message("assistant", "output_text", _prose(rng, 60), f"msg_l{t - 1}_f"), "phase": "final_answer"},
        _message("user", "input_text", f"Task {t + 1}: {_prose(rng, 30)}", f"msg_l{t}_u")]]
    call, output = _exec_call(t, 1, rng)
    steps.append([_reasoning(t, 0, rng),
                  {**_message("assistant", "output_text", _prose(rng, 25), f"msg_l{t}_c"),
                   "phase": "commentary"}, call, output])
    steps.append(list(_exec_call(t, 2, rng)))  # a call and its output: a 2-item request
    if t == 1:
        steps.append(_tool_search(t, browser, rng))
    if t % 2 == 1:
        steps.append(list(_ns_call(t, 3, "mcp__browser", _BROWSER[t % len(_BROWSER)], rng)))
    steps.append([_reasoning(t, 1, rng), *_patch_call(t, rng)])
    if t % 5 == 4:
        steps.append(_js_call(t, rng))  # an array output (docs/codex.md "Echo behaviour")
    return steps


def with_a_call(raw: bytes) -> bytes:
    """`raw` and 2 more items, the model's `exec_command` call and Codex's output of it: the
    request that follows a tool call in the middle of a turn."""
    body = json.loads(raw)
    call, output = _exec_call(900, 1, random.Random(len(body["input"])))
    return json.dumps({**body, "input": [*body["input"], call, output]}, ensure_ascii=False).encode()


def steered(raw: bytes) -> bytes:
    """`raw` and the message a user types while the model works, which Codex sends with the next
    request (a request of 10 items from the Lite session's 9-item one)."""
    body = json.loads(raw)
    message = _message("user", "input_text", "also run the linter", "msg_steer")
    return json.dumps({**body, "input": [*body["input"], message]}, ensure_ascii=False).encode()
