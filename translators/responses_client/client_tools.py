"""The Responses API's own tools that the client runs: `shell` (a local environment),
`apply_patch` and computer use (docs/agents-sdk.md "Client-run tools").

OpenAI's model writes `shell_call` / `apply_patch_call` / `computer_call` items; the client (the
Agents SDK's `ShellTool`, `ApplyPatchTool` and `ComputerTool`) runs them and answers with
`shell_call_output` / `apply_patch_call_output` / `computer_call_output` (a screenshot). Every
other upstream gets an ordinary function of the same name whose schema is the call's own fields,
and its calls come back as those items, exactly as the openai SDK types them
(`ResponseFunctionShellToolCall`, `ResponseApplyPatchToolCall`, `ResponseComputerToolCall`). The
outputs of the next turn are read back as that function's result (a screenshot as an image). A
`shell` whose environment is a hosted container runs on OpenAI's side: the collector keeps it as a
hosted tool.

Shapes: openai 3.63 `types/responses/function_shell_tool_param.py`, `apply_patch_tool_param.py`,
`computer_use_preview_tool_param.py`, `computer_tool_param.py`, `response_input_item_param.py`
(`ShellCall`, `ShellCallOutput`, `ApplyPatchCall`, `ApplyPatchCallOutput`, `ComputerCallOutput`),
`response_function_shell_tool_call.py`, `response_apply_patch_tool_call.py`,
`response_computer_tool_call.py`.
"""

from __future__ import annotations

import json
from typing import Any

from translators.core.report import Report
from translators.ir.request import ClientTool

KINDS = ("shell", "apply_patch", "computer")
"""The IR tool kinds of this module, which are also the upstream function names."""
DECLARED = {"shell": "shell", "apply_patch": "apply_patch", "computer_use_preview": "computer",
            "computer": "computer"}
"""Tool type as declared -> its kind (computer use has a preview and a GA type)."""
TOOL_CHOICES = {"shell": "shell", "apply_patch": "apply_patch", "computer_use_preview": "computer",
                "computer": "computer", "computer_use": "computer"}
"""`tool_choice` types that force one of them (openai `ToolChoiceShellParam`, ...)."""

SHELL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "commands": {"type": "array", "items": {"type": "string"},
                     "description": "Shell commands to run, in order, each a command line."},
        "timeout_ms": {"type": "integer", "description": "Time limit for the commands, in milliseconds."},
        "max_output_length": {"type": "integer",
                              "description": "Most characters of output to return for each command."},
    },
    "required": ["commands"],
}
SHELL_DESCRIPTION = ("Run shell commands on the user's machine. The user runs them in order and "
                     "returns each command's stdout, stderr and exit code.")

APPLY_PATCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "type": {"type": "string", "enum": ["create_file", "update_file", "delete_file"],
                 "description": "What to do with the file."},
        "path": {"type": "string", "description": "The file's path, relative to the workspace root."},
        "diff": {"type": "string",
                 "description": "The change, in the V4A diff format (required to create or update)."},
    },
    "required": ["type", "path"],
}
APPLY_PATCH_DESCRIPTION = """Create, update or delete one file on the user's machine.
- create_file: `diff` holds the new file's lines, each prefixed with "+".
- update_file: `diff` holds hunks. A hunk may open with "@@ <a line of the file>" to locate it (several
  "@@" lines narrow the search), then about three lines of context before and after each change:
  context lines start with " ", removed lines with "-", added lines with "+".
- delete_file: no diff."""
# what the Agents SDK's editor applies (agents/apply_diff.py, the V4A diff: `+` lines for a new
# file; `@@` anchors, ` `/`-`/`+` lines for an update)

_POINT = {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
          "required": ["x", "y"]}
COMPUTER_ACTION: dict[str, Any] = {
    "type": "object",
    "properties": {
        "type": {"type": "string", "enum": ["click", "double_click", "drag", "keypress", "move", "screenshot",
                                            "scroll", "type", "wait"]},
        "x": {"type": "integer"}, "y": {"type": "integer"},
        "button": {"type": "string", "enum": ["left", "right", "wheel", "back", "forward"]},
        "keys": {"type": "array", "items": {"type": "string"}},
        "path": {"type": "array", "items": _POINT},
        "scroll_x": {"type": "integer"}, "scroll_y": {"type": "integer"},
        "text": {"type": "string"},
    },
    "required": ["type"],
}
"""One action of a computer call (openai `ComputerActionParam`), its fields flat under one object."""
COMPUTER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"actions": {"type": "array", "items": COMPUTER_ACTION,
                               "description": "The actions to perform, in order."}},
    "required": ["actions"],
}
COMPUTER_DESCRIPTION = """Operate the user's computer{screen}. Each call performs its actions in order, then
returns a screenshot of the screen. Coordinates are screen pixels. Actions: click {{x, y, button}},
double_click {{x, y}}, drag {{path: [{{x, y}}, ...]}}, keypress {{keys}}, move {{x, y}}, screenshot,
scroll {{x, y, scroll_x, scroll_y}}, type {{text}}, wait; click, double_click, drag, move and scroll
may hold modifier keys ({{keys}})."""


def declared(kind: str, decl: dict[str, Any], path: str, report: Report) -> ClientTool:
    """A `shell` (local environment), `apply_patch` or computer-use declaration -> the IR's
    client tool (`kind` its IR kind)."""
    if kind == "computer":
        report.drop_unread(decl, {"type", "environment", "display_width", "display_height"}, path)
        width, height, environment = (decl.get(k) for k in ("display_width", "display_height", "environment"))
        screen = f", a {environment} screen" if isinstance(environment, str) else ""
        if isinstance(width, int) and isinstance(height, int):
            screen += f" of {width}x{height} pixels"
        return ClientTool(kind="computer", name="computer", parameters=COMPUTER_SCHEMA, origin=path,
                          description=COMPUTER_DESCRIPTION.format(screen=screen))
    report.drop_unread(decl, {"type", "environment", "allowed_callers"}, path)
    callers = decl.get("allowed_callers")
    if isinstance(callers, list) and any(c != "direct" for c in callers):
        report.drop(f"{path}.allowed_callers")  # programmatic tool calling runs on OpenAI's side
    if kind == "apply_patch":
        return ClientTool(kind="apply_patch", name="apply_patch", description=APPLY_PATCH_DESCRIPTION,
                          parameters=APPLY_PATCH_SCHEMA, origin=path)
    environment = decl.get("environment") if isinstance(decl.get("environment"), dict) else {}
    report.drop_unread(environment, {"type", "skills"}, f"{path}.environment", skip_empty=True)
    return ClientTool(kind="shell", name="shell", description=SHELL_DESCRIPTION + _skills(environment),
                      parameters=SHELL_SCHEMA, origin=path)


def runs_locally(decl: dict[str, Any]) -> bool:
    """A `shell` tool the client runs: no environment, or a local one (`container_auto` and
    `container_reference` are OpenAI's hosted containers)."""
    environment = decl.get("environment")
    if environment is None:
        return True
    return isinstance(environment, dict) and environment.get("type", "local") == "local"


def _skills(environment: dict[str, Any]) -> str:
    """The local skills the environment names, which the model may use (openai `LocalSkillParam`)."""
    skills = environment.get("skills")
    lines = [f"\n- {s['name']}: {s.get('description', '')} (in {s.get('path', '?')})"
             for s in skills if isinstance(s, dict) and isinstance(s.get("name"), str)] if isinstance(
        skills, list) else []
    return "\nSkills on the user's machine:" + "".join(lines) if lines else ""


# -- calls and outputs in the input (the client sends back what it got, and what it ran) -------
CALL_KEYS = {"shell_call": ("call_id", "action", "environment", "caller", "created_by"),
             "apply_patch_call": ("call_id", "operation", "caller", "created_by"),
             "computer_call": ("call_id", "action", "actions", "pending_safety_checks")}
OUTPUT_KEYS = {"shell_call_output": ("call_id", "output", "max_output_length", "caller", "created_by"),
               "apply_patch_call_output": ("call_id", "output", "caller", "created_by"),
               "computer_call_output": ("call_id", "output", "acknowledged_safety_checks")}
CALL_KIND = {"shell_call": "shell", "apply_patch_call": "apply_patch", "computer_call": "computer"}
OUTPUT_KIND = {"shell_call_output": "shell", "apply_patch_call_output": "apply_patch",
               "computer_call_output": "computer"}
# `pending_safety_checks` / `acknowledged_safety_checks` are OpenAI's computer-use safety checks:
# only its model raises them, so a call another upstream wrote has none and its output none to say


def call_arguments(item_type: str, raw: dict[str, Any]) -> str | None:
    """The function arguments an earlier call stands for (what the upstream's model wrote), or
    None when the item has no action / operation to carry."""
    if item_type == "computer_call":
        actions = raw.get("actions")
        if not isinstance(actions, list):
            actions = [raw["action"]] if isinstance(raw.get("action"), dict) else None
        return None if actions is None else json.dumps({"actions": actions}, ensure_ascii=False)
    value = raw.get("action" if item_type == "shell_call" else "operation")
    if not isinstance(value, dict):
        return None
    return json.dumps({k: v for k, v in value.items() if v is not None}, ensure_ascii=False)


def screenshot(raw: dict[str, Any]) -> str | None:
    """A `computer_call_output`'s screenshot as an image URL (a data URL as the SDK sends it);
    None for a `file_id` (OpenAI's file store) or none."""
    output = raw.get("output") if isinstance(raw.get("output"), dict) else {}
    url = output.get("image_url")
    return url if isinstance(url, str) and url else None


def output_text(item_type: str, raw: dict[str, Any]) -> tuple[str, bool]:
    """What the model reads of an output item, and whether it says the tool failed."""
    if item_type == "apply_patch_call_output":
        failed = raw.get("status") == "failed"
        said = raw.get("output") if isinstance(raw.get("output"), str) else ""
        return said or ("the patch failed" if failed else "the patch was applied"), failed
    entries = raw.get("output") if isinstance(raw.get("output"), list) else []
    return "\n\n".join(_shell_entry(e) for e in entries if isinstance(e, dict)) or "(no output)", False


def _shell_entry(entry: dict[str, Any]) -> str:
    """One command's output (openai `ResponseFunctionShellCallOutputContentParam`)."""
    outcome = entry.get("outcome") if isinstance(entry.get("outcome"), dict) else {}
    code = outcome.get("exit_code")
    if outcome.get("type") == "timeout":
        head = "timed out"
    else:
        head = f"exit code {code}" if isinstance(code, int) and not isinstance(code, bool) else "finished"
    parts = [head]
    for stream in ("stdout", "stderr"):
        text = entry.get(stream)
        if isinstance(text, str) and text:
            parts.append(f"{stream}:\n{text}")
    return "\n".join(parts)


# -- calls out (what the upstream's model wrote -> the item the client runs) --------------------
def call_item(kind: str, item_id: str, call_id: str, arguments: dict[str, Any],
              report: Report) -> dict[str, Any]:
    """A `shell_call` or `apply_patch_call` item, whole, with the fields the openai SDK requires."""
    if kind == "shell":
        commands = arguments.get("commands")
        if isinstance(commands, str):
            commands = [commands]
            report.note("shell: the model gave `commands` as one string; sent as a list of one")
        listed = [str(c) for c in commands] if isinstance(commands, list) else []
        action: dict[str, Any] = {"commands": listed}
        for key in ("timeout_ms", "max_output_length"):
            value = arguments.get(key)
            action[key] = value if isinstance(value, int) and not isinstance(value, bool) else None
        return {"type": "shell_call", "id": item_id, "call_id": call_id, "action": action,
                "status": "completed", "environment": {"type": "local"}}
    if kind == "computer":
        actions = arguments.get("actions")
        listed = [a for a in actions if isinstance(a, dict)] if isinstance(actions, list) else []
        body: dict[str, Any] = {"type": "computer_call", "id": item_id, "call_id": call_id, "actions": listed,
                                "pending_safety_checks": [], "status": "completed"}
        if len(listed) == 1:  # the preview model's one `action`, which older clients read
            body["action"] = listed[0]
        return body
    operation = {k: arguments[k] for k in ("type", "path", "diff") if isinstance(arguments.get(k), str)}
    if operation.get("type") == "delete_file":
        operation.pop("diff", None)
    return {"type": "apply_patch_call", "id": item_id, "call_id": call_id, "operation": operation,
            "status": "completed"}
