"""Tool names on the upstream's wire, and the way back to the client's name + namespace.

Codex namespaces (MCP servers, multi-agent tools) have no equivalent outside OpenAI, so a
namespaced tool is flattened into one name; every upstream keeps names short and plain
(Anthropic, Bedrock and Chat: `[a-zA-Z0-9_-]{1,64}`; Gemini: must start with a letter or `_`,
docs/anthropic.md "Tool names"; docs/chat.md "Request"; docs/gemini.md "Function names"; docs/bedrock.md "Tool
names and ids"). The cut is stable (FNV-1a of the full name) so
the same tool gets the same wire name on every turn and the prompt cache prefix holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

DEFAULT_NAMESPACE = "functions"
"""Codex's own tools live here and keep their plain names (docs/codex.md "Namespaces")."""

_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193


def fnv1a_32(text: str) -> str:
    h = _FNV_OFFSET
    for byte in text.encode("utf-8"):
        h = ((h ^ byte) * _FNV_PRIME) & 0xFFFFFFFF
    return f"{h:08x}"


def join_namespace(namespace: str | None, name: str) -> str:
    """The flat name Codex itself would use (`mcp__srv__ns` + `_tool` -> `mcp__srv__ns_tool`)."""
    if not namespace or namespace == DEFAULT_NAMESPACE:
        return name
    if name.startswith("_") or namespace.endswith("_"):
        return namespace + name
    return f"{namespace}__{name}"


@dataclass(frozen=True, slots=True)
class NamePolicy:
    max_length: int = 64
    invalid: re.Pattern[str] = re.compile(r"[^A-Za-z0-9_-]")
    must_start_with_letter: bool = False

    def wire_name(self, full: str) -> str:
        name = self.invalid.sub("_", full)
        if self.must_start_with_letter and not (name[:1].isalpha() or name[:1] == "_"):
            name = "_" + name
        if len(name) > self.max_length:
            # keep the readable head; the hash of the *full* name keeps distinct tools distinct
            name = f"{name[: self.max_length - 9]}_{fnv1a_32(full)}"
        return name


DEFAULT_POLICY = NamePolicy()


@dataclass(frozen=True, slots=True)
class ToolRef:
    """How a wire name maps back to what the client declared.

    A slotted dataclass, not a pydantic model: the encoder builds one per tool on every request
    (a pydantic model costs about 2.5 µs to build, this about 0.5 µs; bench/ measures the
    request), and a `Translation` still validates and dumps it as a field.
    """

    name: str
    namespace: str | None = None
    kind: str = "function"
    """function | custom | tool_search | local_shell | shell | apply_patch | computer"""
    syntax: str | None = None
    definition: str | None = None
    plaintext: bool = False
    """The client's schema marks some arguments `encrypted`: a call says they are plain
    (`encrypted_function_args: []`, docs/codex.md "Multi-agent")."""


@dataclass(slots=True)
class ToolIndex:
    """wire name -> client tool. Built by the request encoder, read by the stream decoder."""

    by_wire: dict[str, ToolRef] = field(default_factory=dict)

    def add(self, wire: str, ref: ToolRef) -> None:
        self.by_wire[wire] = ref

    def lookup(self, wire: str) -> ToolRef:
        """An unknown wire name comes back as a plain function of that name (the model may
        call a tool that was only in history); never guess a namespace."""
        return self.by_wire.get(wire) or ToolRef(name=wire)


def assign_wire_names(
    keys: list[tuple[str | None, str]], policy: NamePolicy = DEFAULT_POLICY
) -> dict[tuple[str | None, str], str]:
    """Wire names for (namespace, name) pairs, unique even when two flatten alike."""
    out: dict[tuple[str | None, str], str] = {}
    taken: set[str] = set()
    for key in keys:
        if key in out:
            continue
        full = join_namespace(*key)
        wire = policy.wire_name(full)
        if wire in taken:
            salted = f"{key[0] or ''}\x00{key[1]}"
            wire = policy.wire_name(f"{wire[: policy.max_length - 9]}_{fnv1a_32(salted)}")
        taken.add(wire)
        out[key] = wire
    return out
